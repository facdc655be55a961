// What `pipescaler status` and daemon.status() show per pipe, read from the shared Redis state.
import type { PipeKind, PipeState, ScalingValues } from '../../api/index.js';
import { SKIP_REASON_CODES, type Reason } from '../../policy/index.js';
import type { Config } from '../../config/index.js';
import type { StoredOverrideValue, PauseFlag, StoredDecision, StoredError, StoredVerdict } from '../model/record.js';
import type { StateStore } from '../store/state-store.js';
import { readKeyRefusals, type KeyRefusal } from '../store/key-auth.js';
import { nextScaleUps, readEstimates, type NextScaleUp } from './next-scale-up.js';
import { accountOf, type ChangeOnItsWay, type PlatformShown } from './pipe-account.js';

export type { ChangeOnItsWay, ChangeState, PlatformShown } from './pipe-account.js';

export interface PipeStatus {
  readonly pipe: string;
  readonly policy: string;
  readonly key: string;
  /** The pool that gave the pipe its key, when the pipe names a pool. */
  readonly pool?: string;
  readonly kind: PipeKind | null;
  readonly state: PipeState | null;
  /** The values the platform last showed (platform.values; kept for scripts that read it). */
  readonly applied: ScalingValues;
  /** What the platform last showed: its values and state, and the instant of that read or answer. */
  readonly platform: PlatformShown;
  readonly desired: ScalingValues | null;
  readonly windows: readonly string[];
  readonly lastDecision: StoredDecision | null;
  /** Why the last decision skipped the pipe or held a change back (a reason code), else null. */
  readonly reason: string | null;
  /** Seconds since the last decision's tick: how old this row is (null: never evaluated). */
  readonly ageSeconds: number | null;
  readonly lastError: StoredError | null;
  /** The pause in force: the pipe's own, the fleet's (`pause --all`) or the config's (pipes[].paused). */
  readonly paused: PauseFlag | null;
  /** The pipe's override: in force, or ended (until in the past) while its key is kept. */
  readonly override: StoredOverrideValue | null;
  readonly parked: StoredError | null;
  readonly drifts: number;
  /** The platform refused the pipe's key on its last check (401: the key; 403: the services list). */
  readonly keyRefused: KeyRefusal | null;
  /** The verdict on the pipe's last window start: met, late (by lateMs), missed or excluded; null: none yet. */
  readonly lastVerdict: StoredVerdict | null;
  /** The window start whose verdict is still open (not confirmed yet, before its deadline). */
  readonly verdictDue: { readonly boundary: number; readonly windows: readonly string[] } | null;
  /** The newest change sent that no read has shown in force (pipe-account.ts): sending,
   *  confirming, outcome_unknown or unconfirmed, since when; null: none on its way. */
  readonly change: ChangeOnItsWay | null;
  /** The last confirmation: the target's values and the first read that showed them in force. */
  readonly confirmed: { readonly values: ScalingValues; readonly at: number } | null;
  /** leadTime auto: the pipe's next scale-up (when it may be sent, when it is expected at target,
   *  the actuation counted on and where that comes from), or null. */
  readonly nextScaleUp: NextScaleUp | null;
}

/** The reasons that hold a change back, in the order they are named. */
const HOLDING: readonly string[] = ['cooldown', 'stabilization', 'max_step', 'tolerance', 'metric_unavailable'];

/** The reason code a status row shows: why a pipe was skipped, or what held its change back. */
export function statusReason(d: Pick<StoredDecision, 'action' | 'reasons'> | null): string | null {
  if (d === null) return null;
  const has = (codes: readonly string[]): Reason | undefined => d.reasons.find((r) => codes.includes(r.code));
  if (d.action === 'skip') return has(SKIP_REASON_CODES)?.code ?? d.reasons[0]?.code ?? 'skip';
  for (const code of HOLDING) if (d.reasons.some((r) => r.code === code)) return code;
  return null;
}

export async function readPipeStatuses(
  store: StateStore,
  config: Config,
  now: number = Date.now(),
): Promise<PipeStatus[]> {
  const refusals = await readKeyRefusals(store.redis, store.keys, [...new Set(config.pipes.map((p) => p.key))]);
  const ups = nextScaleUps(config, now, await readEstimates(store.redis, store.keys, config));
  return Promise.all(
    config.pipes.map(async (p) => {
      const { rec, pause, override } = await store.snapshot(p.name, p);
      // a pause declared in the config holds whatever Redis holds, as the evaluation sees it
      const paused: PauseFlag | null = p.paused ? { reason: p.paused, scope: 'config' } : pause;
      const last = rec.lastDecision;
      const { platform, change } = accountOf(rec, now);
      return {
        pipe: p.name,
        policy: p.policy,
        key: p.key,
        ...(p.pool !== undefined ? { pool: p.pool } : {}),
        kind: rec.kind,
        state: rec.state,
        applied: platform.values,
        platform,
        desired: rec.desired,
        windows: last?.windows ?? [],
        lastDecision: last,
        reason: statusReason(last),
        ageSeconds: last ? Math.max(0, Math.round((now - last.at) / 1000)) : null,
        lastError: rec.lastError,
        paused,
        override,
        parked: rec.parked,
        drifts: rec.drifts,
        keyRefused: refusals.get(p.key) ?? null,
        lastVerdict: rec.lastVerdict,
        verdictDue: rec.verdictDue ? { boundary: rec.verdictDue.boundary, windows: rec.verdictDue.windows } : null,
        change,
        confirmed: rec.confirmed ? { values: rec.confirmed.values, at: rec.confirmed.at } : null,
        nextScaleUp: ups.get(p.name) ?? null,
      };
    }),
  );
}
