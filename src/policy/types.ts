// The normalized shapes the policy engine works on. The config loader (config-schema.ts) turns
// YAML into these; decide() and the windows read only these. All times are epoch milliseconds;
// nothing here reads a clock.
import type { PipeKind, PipeState, ReversePrivateEndpointStatus, ScalingField, ScalingValues, ServiceState } from '../api/index.js';

export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';

/** A field's target: a fixed value, or bounds that keep the applied value when it fits. */
export type FieldTarget = { readonly value: number } | { readonly min: number; readonly max: number };
export type Target = Partial<Record<ScalingField, FieldTarget>>;

/** Per-field bounds of a pipe (config `pipes[].bounds`), applied after the window target. */
export type Bounds = Partial<Record<ScalingField, { readonly min?: number; readonly max?: number }>>;

export interface LocalTime {
  readonly hour: number;
  readonly minute: number;
}

interface WindowBase {
  readonly name: string;
  /** Higher wins on overlap; equal priorities combine field by field with max. Default 0. */
  readonly priority: number;
  readonly target: Target;
}

/** Repeats on `days` at local wall-clock `start` in `timezone`; ends at `end` (wall clock,
 *  before or equal... wraps past midnight when end <= start) or after `durationMs` of elapsed time. */
export interface RecurringWindow extends WindowBase {
  readonly kind: 'recurring';
  readonly days: readonly Weekday[];
  readonly start: LocalTime;
  readonly end?: LocalTime;
  readonly durationMs?: number;
  readonly timezone: string;
  /** Local dates (YYYY-MM-DD, in `timezone`) on which this window does not start. */
  readonly exclude: readonly string[];
}

/** Active from `from` (inclusive) to `to` (exclusive), absolute instants. */
export interface OneOffWindow extends WindowBase {
  readonly kind: 'oneOff';
  readonly from: number;
  readonly to: number;
}

export type Window = RecurringWindow | OneOffWindow;

export interface DirectionBehavior {
  /** Largest change per decision, per field; absent = unlimited. */
  readonly maxStep: ScalingValues;
  /** Minimum time since the last change in this direction. */
  readonly cooldownMs: number;
}

export interface Behavior {
  readonly scaleUp: DirectionBehavior;
  readonly scaleDown: DirectionBehavior & {
    /** A scale-down goes no lower than the highest recommendation of this trailing window. */
    readonly stabilizationMs: number;
  };
}

export interface Policy {
  readonly name: string;
  /** Target outside every window. */
  readonly baseline: Target;
  readonly windows: readonly Window[];
  readonly behavior: Behavior;
}

/** What the daemon knows of one pipe (Redis), and what plan/simulate assume. */
export interface PipeView {
  /** null until first contact has read the pipe. */
  readonly kind: PipeKind | null;
  readonly state: PipeState | null;
  /** The scaling the platform last reported (fields it reported as unknown are absent). */
  readonly applied: ScalingValues;
  /** Pipe bounds from the config. */
  readonly bounds: Bounds;
  /** Epoch ms of the last applied change per direction. */
  readonly lastChange: { readonly up?: number; readonly down?: number };
  /** Recent recommendations (the pre-behavior targets), newest last, for stabilization. */
  readonly recommendations: readonly { readonly at: number; readonly values: ScalingValues }[];
  /** Status of each reverse private endpoint the pipe's Kafka source uses. */
  readonly endpoints: Readonly<Record<string, ReversePrivateEndpointStatus>>;
  readonly paused?: { readonly reason: string; readonly until?: number };
  /** The state of the pipe's service when known (the daemon reads it before a change). */
  readonly serviceState?: ServiceState;
}

/** Why a decision is what it is; also the `reason` label of the decisions metric. */
/** The reasons decide() skips a pipe for, in the order it checks them. */
export const SKIP_REASON_CODES = ['unknown_pipe', 'paused', 'service_not_running', 'pipe_state', 'endpoint_not_ready'] as const;

export const REASON_CODES = [
  'window', 'baseline', 'pipe_bound', 'platform_range', 'cooldown', 'max_step', 'stabilization',
  'kind', 'pipe_state', 'endpoint_not_ready', 'paused', 'unknown_pipe', 'unchanged', 'service_not_running',
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

export interface Reason {
  readonly code: ReasonCode;
  readonly field?: ScalingField;
  /** One readable sentence, e.g. "business-hours (Europe/Berlin) sets replicas 6". */
  readonly message: string;
}

export type Direction = 'up' | 'down' | 'none';

export interface Decision {
  /** change: `changes` should be sent; none: nothing to do; skip: the pipe must not be scaled now. */
  readonly action: 'change' | 'none' | 'skip';
  readonly direction: Direction;
  /** Names of the windows that won (empty: baseline). */
  readonly windows: readonly string[];
  /** The target after window, bounds and platform ranges, before behavior (for stabilization). */
  readonly recommendation: ScalingValues;
  /** What the pipe should have after behavior, only the fields of its kind. */
  readonly desired: ScalingValues;
  /** Only the fields of `desired` that differ from `applied`: the PATCH body. */
  readonly changes: ScalingValues;
  readonly reasons: readonly Reason[];
}

/** A pipe of the config (`pipes[]`). */
export interface PipeConfig {
  /** Unique, lower-case; the label in metrics and logs. */
  readonly name: string;
  readonly organizationId: string;
  readonly serviceId: string;
  readonly pipeId: string;
  /** Name of a policy in `policies`. */
  readonly policy: string;
  /** Name of an API key in `api.keys`; `default` is the key of `api.keyId`/`api.keySecret`. */
  readonly key: string;
  readonly bounds: Bounds;
}

export interface ApiKeyConfig {
  readonly keyId: string;
  /** Resolved from the environment or `keySecretFile`; never logged. */
  readonly keySecret: string;
  /** The platform's limit for this key (default 10 per 10 s). */
  readonly rateLimit: { readonly requests: number; readonly perMs: number };
}

/** The loaded, validated, normalized config (config/pipescaler.yaml). */
export interface Config {
  readonly api: {
    /** 'embedded' runs the embedded cloud in-process from `fixtures`. */
    readonly baseUrl: string;
    readonly fixtures: string;
    readonly timeoutMs: number;
    /** `default` plus every entry of `api.keys`. */
    readonly keys: Readonly<Record<string, ApiKeyConfig>>;
  };
  readonly redis: { readonly url: string; readonly prefix: string };
  readonly evaluate: { readonly cron: string; readonly reconcileMs: number; readonly concurrency: number };
  readonly telemetry: { readonly listen: string; readonly logLevel: string };
  readonly dryRun: boolean;
  readonly pipes: readonly PipeConfig[];
  readonly policies: Readonly<Record<string, Policy>>;
}
