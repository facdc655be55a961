// The model's fixed set-up (test/daemon/lifecycle/lifecycle.model.test.ts): the two pipes and their
// policies, the platform's limit, the faults the proxy makes itself, and the counters a whole run
// adds up over its sequences.
import { Redis } from 'ioredis';
import type { Config } from '../../../../src/config/types.js';
import type { PipeConfig } from '../../../../src/policy/types.js';
import { REDIS_URL, demoPipe, oneOff, policy, testConfig } from '../../helpers.js';

export const T0 = Date.parse('2026-11-23T10:00:00Z');
export const MIN = 60_000;
export const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

const STREAM = demoPipe('orders-events', 'flip');
const OBJECTS = demoPipe('nightly-s3', 'flip-objects');
export const PIPES: Record<string, PipeConfig> = {
  [STREAM.pipeId.toLowerCase()]: STREAM,
  [OBJECTS.pipeId.toLowerCase()]: OBJECTS,
};
/** Faults the proxy makes itself: the connection cut (socket destroyed) before the request reaches
 *  the cloud, or after the cloud carried it out (its answer lost). The client cannot tell them apart. */
export const CUT_BEFORE = -1;
export const CUT_AFTER = -2;
/** The cloud carries the change out; its answer is held while the job's lock lapses (deleted, as a
 *  stalled event loop lets it expire) and BullMQ's stalled check runs the job again. */
export const STALL = -3;
/** The same, and the daemon's clock passes the request's time (api.timeout) meanwhile: the job's
 *  second attempt settles the change with a read before its first attempt's 200 comes. */
export const STALL_LATE = -4;
/** The connection cut before the request reaches the cloud, the request kept: the cloud carries it
 *  out later, at the first tick after a newer change of the pipe went out, as a request its client
 *  gave up on can land minutes later (model/commands.ts landLate); never, if none goes within
 *  LAND_LATE_MS of its send. Only kept cases use it (the generated ones stay as they were). */
export const CUT_LATE = -5;
/** How long after its send a change cut by CUT_LATE may still be carried out: the latest seen (6-9
 *  minutes), within the 15 minutes the daemon keeps a replaced change of unknown outcome. */
export const LAND_LATE_MS = 9 * MIN;
/** The platform's limit of the key, in real time as the daemon's budget runs (Redis' clock): small,
 *  so that two pipes' bursts fill its window. The proxy counts it (a fixed window from the first
 *  request after the last ended) and answers every request with its headers. */
export const LIMIT = { requests: 4, perMs: 1_000 } as const;
export const STATES = ['Running', 'Stopped', 'Failed', 'Completed', 'Paused', 'InternalError', 'Degraded'] as const;

/** Both policies' window starts: every 7 minutes from 10:02, each window 3 minutes long. */
export const WINDOW_STARTS = Array.from({ length: 12 }, (_, i) => T0 + (i * 7 + 2) * MIN);
/** Windows that open and close every few minutes, so ticks keep crossing boundaries. */
function windows(field: 'replicas' | 'concurrency', high: number) {
  return WINDOW_STARTS.map((start, i) => oneOff(`w${i}`, start, start + 3 * MIN, { [field]: high + (i % 3) }));
}

export function configOf(base: string, prefix: string, maxReplicas: number | null): Config {
  const bounds = maxReplicas === null ? {} : { replicas: { max: maxReplicas } };
  return testConfig({
    baseUrl: base,
    prefix,
    rateLimit: LIMIT,
    reconcileMs: 5 * MIN,
    pipes: [{ ...STREAM, bounds }, OBJECTS],
    policies: {
      flip: policy('flip', { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, windows('replicas', 6)),
      'flip-objects': policy('flip-objects', { concurrency: 2 }, windows('concurrency', 5)),
    },
  });
}

/** What a whole run adds up over its sequences (the property prints it; kept cases look at some). */
export const stats = {
  /** Changes that reached the proxy: the run must have sent some. */
  changesSent: 0,
  /** Changes whose connection was cut, before and after the cloud took them. */
  cutChanges: { before: 0, after: 0, late: 0 },
  /** Changes cut by CUT_LATE that the cloud carried out after a newer change of their pipe, and
   *  those a read then reported landing late (by their key). */
  landedLate: { carriedOut: 0, reported: 0 },
  /** Changes whose job lost its lock while the proxy held their answer. */
  stalls: 0,
  /** Stalls whose change a read settled before its 200 came. */
  lateStalls: 0,
  /** Answers held past the platform's window (late, and so out of order with the next ones). */
  lateAnswers: 0,
  /** The most requests the platform counted in one window, the windows it counted, and the
   *  refusals after someone else's spending. */
  platform: { most: 0, windows: 0, excused: 0 },
  /** Verdicts given for a window start a Redis wipe touched, by verdict. */
  afterWipe: {} as Record<string, number>,
  /** Audit lines that recorded a change, by result (applied, landed_late, outcome_unknown). */
  recorded: {} as Record<string, number>,
  /** Verdicts by reason `unseen`: starts the pipe's record had not read it by. */
  unseen: 0,
  /** Losses a tick had seen whose every trace a later wipe and a restart erased. */
  lossesForgotten: 0,
};
