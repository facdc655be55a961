// A pipe's next scale-up under leadTime auto, as `status` and `plan` show it: when it may be sent
// (its slot in its key's lead plan), its boundary, when it is expected at target and confirmed
// there (the plan reserves its confirmation reads), and the actuation
// the plan counted on with where that comes from (the pipe's measured p95, its kind's, or the
// configured expectation). The plan is made as the daemon makes it, from the samples in Redis.
import { leadPlanAt, nextSlot, type ScalingConfig } from '../../policy/index.js';
import {
  actuationPipes,
  countsMeasured,
  minSamplesOf,
  readActuation,
  type ActuationEstimate,
} from '../store/actuation-store.js';
import { refOf } from '../model/record.js';
import type { RedisClient } from '../store/redis-connection.js';
import type { redisKeys } from '../store/redis-keys.js';

export interface NextScaleUp {
  /** The boundary it is for (a window starts, or ends into a higher target). */
  readonly boundary: number;
  /** When it may be sent: its slot's start. */
  readonly sendFrom: number;
  /** When it is expected confirmed at target: its confirming read's end (with no actuation
   *  counted, no read is planned: its slot's end). */
  readonly expectedAt: number;
  /** With an actuation counted: when the platform is expected to hold the target (its slot's end
   *  plus the actuation). */
  readonly atTargetAt?: number;
  /** The actuation counted on (capped at evaluate.actuation.max). */
  readonly actuationMs: number;
  /** Where it comes from; null: the samples were not read (the configured expectation). */
  readonly actuation: ActuationEstimate | null;
}

/** The estimates of every pipe of the config, by refOf, from the samples in Redis. */
export function readEstimates(
  redis: RedisClient,
  keys: ReturnType<typeof redisKeys>,
  config: ScalingConfig,
): Promise<Map<string, ActuationEstimate>> {
  if (!countsMeasured(config)) return Promise.resolve(new Map<string, ActuationEstimate>());
  return readActuation(redis, keys, actuationPipes(config), minSamplesOf(config));
}

/** Each leadTime-auto pipe's next scale-up after `now` (pipes with none are left out).
 *  `estimates` null: the configured expectation for every pipe. */
export function nextScaleUps(
  config: ScalingConfig,
  now: number,
  estimates: ReadonlyMap<string, ActuationEstimate> | null,
): Map<string, NextScaleUp> {
  const plan = leadPlanAt(config, now, {
    actuationMs: (p) => estimates?.get(refOf(p))?.ms,
  });
  const out = new Map<string, NextScaleUp>();
  for (const p of config.pipes) {
    const slot = nextSlot(plan, p.name, now);
    if (!slot) continue;
    out.set(p.name, {
      boundary: slot.boundary,
      sendFrom: slot.start,
      expectedAt: slot.expectedAt,
      ...(slot.atTargetAt !== undefined ? { atTargetAt: slot.atTargetAt } : {}),
      actuationMs: slot.actuationMs,
      actuation: estimates ? (estimates.get(refOf(p)) ?? { ms: undefined, source: 'configured', samples: 0 }) : null,
    });
  }
  return out;
}
