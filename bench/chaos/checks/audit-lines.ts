// The replicas' audit lines (and drift lines) as the checks read them: parsed from each replica's
// JSON log, the other lines skipped.
import { SCALING_FIELDS, type ScalingValues } from '../../../src/api/index.js';

/** An audit line (or drift line) of a replica's JSON log, the members the checks read. */
export type AuditRecord =
  | {
      readonly kind: 'applied';
      readonly replica: string;
      readonly time: number;
      readonly pipe: string;
      readonly idempotencyKey?: string;
      readonly outcomeReported?: string;
      readonly after?: ScalingValues;
    }
  | {
      readonly kind: 'landed_late' | 'outcome_unknown';
      readonly replica: string;
      readonly time: number;
      readonly pipe: string;
      readonly idempotencyKey?: string;
      readonly after?: ScalingValues;
    }
  | {
      readonly kind: 'verdict';
      readonly replica: string;
      readonly time: number;
      readonly pipe: string;
      readonly verdict: string;
      readonly boundary: number;
      readonly target: ScalingValues;
      readonly confirmedAt?: number;
      readonly reason?: string;
    }
  | {
      readonly kind: 'drift';
      readonly replica: string;
      readonly time: number;
      readonly pipe: string;
      readonly expected: ScalingValues;
      readonly actual: ScalingValues;
    };

const DRIFT_MESSAGE = 'pipe scaling drifted from what was applied';

function values(v: unknown): ScalingValues {
  const out: ScalingValues = {};
  if (v === null || typeof v !== 'object') return out;
  for (const f of SCALING_FIELDS) {
    const n = (v as Record<string, unknown>)[f];
    if (typeof n === 'number') out[f] = n;
  }
  return out;
}

const ms = (iso: unknown): number | undefined => (typeof iso === 'string' ? Date.parse(iso) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The audit records of one replica's output lines (other lines are skipped). */
export function auditRecords(lines: readonly string[], replica: string): AuditRecord[] {
  const out: AuditRecord[] = [];
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    const pipe = str(rec.pipe);
    const time = ms(rec.time) ?? (typeof rec.time === 'number' ? rec.time : NaN);
    if (pipe === undefined || !Number.isFinite(time)) continue;
    const key = str(rec.idempotencyKey);
    const common = { replica, time, pipe, ...(key !== undefined ? { idempotencyKey: key } : {}) };
    if (rec.msg === DRIFT_MESSAGE) {
      out.push({ kind: 'drift', replica, time, pipe, expected: values(rec.expected), actual: values(rec.actual) });
    } else if (rec.audit !== true) {
      continue;
    } else if (typeof rec.verdict === 'string') {
      const boundary = ms(rec.boundary);
      if (boundary === undefined) continue;
      const confirmedAt = ms(rec.confirmedAt);
      const reason = str(rec.reason);
      out.push({
        kind: 'verdict',
        replica,
        time,
        pipe,
        verdict: rec.verdict,
        boundary,
        target: values(rec.target),
        ...(confirmedAt !== undefined ? { confirmedAt } : {}),
        ...(reason !== undefined ? { reason } : {}),
      });
    } else if (rec.result === 'applied') {
      const reported = str(rec.outcomeReported);
      out.push({
        kind: 'applied',
        ...common,
        after: values(rec.after),
        ...(reported !== undefined ? { outcomeReported: reported } : {}),
      });
    } else if (rec.result === 'landed_late' || rec.result === 'outcome_unknown') {
      out.push({ kind: rec.result, ...common, after: values(rec.after) });
    }
  }
  return out;
}
