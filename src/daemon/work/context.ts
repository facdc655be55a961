// What the processors share with the daemon that runs them: the live config (swapped on reload),
// the state store, the clock, the emitter, and the way to enqueue work. Processors get this, not
// the daemon, so each file holds one piece of the flow.
import type { Direction, PipeConfig, StateLoss } from '../../policy/index.js';
import type { Config } from '../../config/index.js';
import type { KeyLane } from '../lanes/lane.js';
import type { DaemonLogger } from '../model/logger.js';
import type { ReadWhy } from '../model/job-results.js';
import type { DaemonEmitter } from '../model/events.js';
import type { MetricSource } from '../sources/metric-source.js';
import type { StateStore } from '../store/state-store.js';

export interface DaemonContext {
  config(): Config;
  readonly store: StateStore;
  readonly emitter: DaemonEmitter;
  readonly logger: DaemonLogger;
  /** Metric values for policies with a metric (one query per policy per tick, fleet-wide). */
  readonly metrics: MetricSource;
  now(): number;
  /** Why Redis' state is not to be trusted (it lost our state, redis-guard.ts): no change goes out. */
  stateLost(): string | null;
  /** The span of the last time Redis lost the daemon's state (redis-guard.ts), or null: the window
   *  verdicts around it are judged by what reads showed since (verdicts.ts). */
  stateLoss(): StateLoss | null;
  /** Per pipe, the newest window start this replica gave a verdict for or saw given (a record's
   *  lastVerdict): a record Redis brings back from before it (restored from an older snapshot)
   *  holds that start as due again, and it is not given twice (verdicts.ts). */
  readonly verdictsGiven: Map<string, number>;
  /** Auth failures (401/403) in a row after which a pipe is parked until the next reload. */
  readonly parkAfter: number;
  laneFor(pipe: PipeConfig): KeyLane | undefined;
  /** The pipe's effective reconcile period: evaluate.reconcile stretched to its key's read share. */
  reconcileMsFor(pipe: PipeConfig): number;
  /** The pipe's measured actuation latency (p95 of its own or its kind's samples) once there are
   *  enough, else undefined: its confirmation read is due then (next-step.ts Situation). */
  measuredActuationMs?(pipe: PipeConfig): number | undefined;
  /** When this replica last reloaded its config (undefined: never since its start). */
  reloadedAt?(): number | undefined;
  /** leadTime auto: up to which instant the schedule raises the pipe's target at `at` (lead-plans.ts). */
  leadUntilFor(pipe: PipeConfig, at: number): number | undefined;
  /** leadTime auto: the start of the pipe's next slot, when the evaluation of the tick `tickAt`
   *  (run now) queues a turn for it (lead-plans.ts leadTurnAtFor); undefined: none. */
  leadTurnAtFor(pipe: PipeConfig, tickAt: number): number | undefined;
  enqueueEvaluate(pipe: string, tickAt: number, suffix?: string): Promise<void>;
  /** A turn on the pipe's key queue at a read's priority: a read is due (first contact, settle,
   *  confirm, reconcile, an endpoint). The turn decides again when it runs, so it changes the pipe
   *  if that is due then. `why` (default reconcile) sets its priority (queues.ts applyPriority): a
   *  read a change waits for first, then a change's confirmation (oldest change first: `sentAt`,
   *  the first send of the change it confirms), then reconcile reads. `at`: the instant the read is
   *  queued for; a later one than now waits in the queue's delayed set until then. */
  enqueueRead(pipe: PipeConfig, tickAt: number, why?: ReadWhy, sentAt?: number, at?: number): Promise<void>;
  /** A turn on the pipe's key queue at the change's priority (scale-ups first). `at`: the instant
   *  it is queued for (a lead slot's start); a later one than now waits in the queue's delayed set
   *  until then, and gives way to any other turn of the pipe but a reconcile read (enqueue.ts). */
  enqueueChange(pipe: PipeConfig, direction: Direction, tickAt: number, at?: number): Promise<void>;
}
