// Scaling changes that take effect later, as on the live platform: the PATCH is answered at once,
// the new replicas run after a delay (per pipe, per kind, or the default; `never` for a change
// that is stuck). Time is the cloud's injected clock, and nothing runs on a timer: a pipe's due
// changes are applied when it is next looked at (applyDue), so a test steps its clock past the
// delay instead of sleeping.
import { pipeKind, type ScalingField } from '../api/index.js';
import type { ParsedFixtures, Propagation, PropagationDelay } from './fixtures-schema.js';
import type { StoredPipe, StoredScaling } from './records.js';

/** A change the platform has taken but not yet carried out. */
/** Where the changes on their way are kept (the cloud's store). */
export interface PendingStore {
  readonly pending: Map<string, PendingChange[]>;
}

export interface PendingChange {
  readonly values: Partial<StoredScaling>;
  /** Epoch ms it was asked for. */
  readonly requestedAt: number;
  /** Epoch ms it takes effect; Infinity when it never does. */
  readonly effectiveAt: number;
}

export const NO_PROPAGATION: Propagation = { default: 0, reads: 'old', pipes: {} };

/** The fixtures' propagation with each pipe's own `propagation` member folded into `pipes`. */
export function propagationOf(f: ParsedFixtures): Propagation {
  const base = f.propagation ?? NO_PROPAGATION;
  const pipes: Record<string, PropagationDelay> = {};
  for (const org of f.organizations)
    for (const svc of org.services)
      for (const p of svc.pipes) if (p.propagation !== undefined) pipes[p.id.toLowerCase()] = p.propagation;
  for (const [id, d] of Object.entries(base.pipes)) pipes[id.toLowerCase()] = d;
  return { ...base, pipes };
}

/** The delay (ms; Infinity for `never`) of a change to this pipe made now. */
export function delayOf(config: Propagation, pipe: StoredPipe): number {
  const kind = pipeKind(pipe.source);
  const d =
    config.pipes[pipe.id.toLowerCase()] ??
    (kind === 'stream' || kind === 'objectStorage' ? config[kind] : undefined) ??
    config.default;
  return d === 'never' ? Infinity : d;
}

/** What the pipe will hold once everything pending has taken effect (stuck changes included). */
export function desiredScaling(store: PendingStore, pipe: StoredPipe): StoredScaling {
  const out = { ...pipe.scaling };
  for (const c of store.pending.get(pipe.id.toLowerCase()) ?? []) Object.assign(out, c.values);
  return out;
}

/**
 * Take a change at `now`: at once when its delay is 0 (and it is not stuck), else pending until
 * its delay has passed. Returns whether the pipe's scaling changed now.
 */
export function takeChange(
  store: PendingStore,
  pipe: StoredPipe,
  values: Partial<StoredScaling>,
  delayMs: number,
  now: number,
): boolean {
  if (delayMs <= 0) {
    applyDue(store, pipe, now);
    const before = JSON.stringify(pipe.scaling);
    Object.assign(pipe.scaling, values);
    supersede(store, pipe, values, now);
    return JSON.stringify(pipe.scaling) !== before;
  }
  const effectiveAt = now + delayMs;
  supersede(store, pipe, values, effectiveAt);
  const id = pipe.id.toLowerCase();
  const list = store.pending.get(id) ?? [];
  list.push({ values, requestedAt: now, effectiveAt });
  // Stable: equal instants keep the order the changes came in.
  list.sort((a, b) => a.effectiveAt - b.effectiveAt);
  store.pending.set(id, list);
  return false;
}

/** Last writer wins: a pending change that would take effect after `from` loses the fields of a
 *  later request (a stuck one too: a new request replaces it). */
function supersede(store: PendingStore, pipe: StoredPipe, values: Partial<StoredScaling>, from: number): void {
  const id = pipe.id.toLowerCase();
  const list = store.pending.get(id);
  if (!list) return;
  const fields = Object.keys(values) as ScalingField[];
  const kept = list.flatMap((c) => {
    if (c.effectiveAt < from) return [c];
    const rest = Object.fromEntries(Object.entries(c.values).filter(([f]) => !fields.includes(f as ScalingField)));
    return Object.keys(rest).length > 0 ? [{ ...c, values: rest }] : [];
  });
  if (kept.length > 0) store.pending.set(id, kept);
  else store.pending.delete(id);
}

/** Apply the pipe's changes whose time has come, in the order they take effect. */
export function applyDue(store: PendingStore, pipe: StoredPipe, now: number): void {
  const id = pipe.id.toLowerCase();
  const list = store.pending.get(id);
  if (!list) return;
  let due = 0;
  while (due < list.length && (list[due]?.effectiveAt ?? Infinity) <= now) {
    Object.assign(pipe.scaling, list[due]?.values);
    due++;
  }
  if (due === list.length) store.pending.delete(id);
  else if (due > 0) store.pending.set(id, list.slice(due));
}

/** Whether a change of the pipe is still on its way (for `reads: transient`). */
export function propagating(store: PendingStore, pipe: StoredPipe): boolean {
  return store.pending.has(pipe.id.toLowerCase());
}

/** The members of a request that change what the pipe will hold. */
export function changedFields(
  desired: StoredScaling,
  sent: readonly { f: ScalingField; v: number }[],
): Partial<StoredScaling> {
  const out: Partial<StoredScaling> = {};
  for (const { f, v } of sent) if (desired[f] !== v) out[f] = v;
  return out;
}
