// Check 5, drift the daemon reported of its own change: a drift whose values are the daemon's last
// change answered 200.
import type { ScalingField } from '../../../src/api/index.js';
import type { SentPatch } from '../observer.js';
import type { AuditRecord } from './audit-lines.js';
import { changes200, EXAMPLES, iso, show, type PipeRef } from './changes.js';

export interface DriftCheck {
  readonly reported: number;
  /** Drift whose values are the daemon's own last change answered 200. */
  readonly own: number;
  readonly examples: readonly string[];
}

export function ownDrift(
  patches: readonly SentPatch[],
  audit: readonly AuditRecord[],
  pipes: readonly PipeRef[],
): DriftCheck {
  const idOf = new Map(pipes.map((p) => [p.name, p.pipeId.toLowerCase()]));
  const byPipe = new Map<string, SentPatch[]>();
  for (const p of changes200(patches)) {
    const list = byPipe.get(p.pipeId) ?? [];
    list.push(p);
    byPipe.set(p.pipeId, list);
  }
  let reported = 0;
  let own = 0;
  const examples: string[] = [];
  for (const a of audit) {
    if (a.kind !== 'drift') continue;
    reported += 1;
    let last: SentPatch | undefined;
    for (const p of byPipe.get(idOf.get(a.pipe) ?? '') ?? []) {
      if ((p.answeredAt ?? p.at) > a.time) break;
      last = p;
    }
    if (!last) continue;
    const body = Object.entries(last.body).filter(([, v]) => v !== null && v !== undefined);
    const mine = body.length > 0 && body.every(([f, v]) => a.actual[f as ScalingField] === v);
    if (!mine) continue;
    own += 1;
    if (examples.length < EXAMPLES)
      examples.push(
        `${a.pipe} at ${iso(a.time)} (by ${a.replica}): drift ${show(a.expected)} -> ${show(a.actual)}, the daemon's change ${show(last.body)} key ${last.idempotencyKey ?? '-'} answered 200 at ${iso(last.answeredAt)}`,
      );
  }
  return { reported, own, examples };
}
