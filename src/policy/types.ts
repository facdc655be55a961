// The normalized shapes the policy engine works on. The config loader (src/config/schema.ts) turns
// YAML into these; decide() and the windows read only these. All times are epoch milliseconds;
// nothing here reads a clock.
import type {
  PipeKind,
  PipeState,
  ReversePrivateEndpointStatus,
  ScalableKind,
  ScalingField,
  ScalingValues,
  ServiceState,
} from '../api/index.js';

export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
/** The days in calendar order, Monday first. */
export const WEEKDAYS: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

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

/** How early a window's scale-ups may start: `auto` (the key's lead plan, lead.ts) or a duration in ms. */
export type LeadTime = 'auto' | number;

export interface Behavior {
  readonly scaleUp: DirectionBehavior & {
    /** Scale-ups due at a boundary may be sent this early (default `auto`). Scale-downs never lead. */
    readonly leadTime?: LeadTime;
  };
  readonly scaleDown: DirectionBehavior & {
    /** A scale-down goes no lower than the highest recommendation of this trailing window. */
    readonly stabilizationMs: number;
  };
  /** A change made by hand: revert it (default), hold it a while, or adopt it as a floor (drift.ts). */
  readonly onDrift?: OnDrift;
  /** What an override may do: any value (default), or only raise the policy's target (override.ts). */
  readonly overrides?: OverridesAllowed;
}

/** The field a metric drives: replicas (stream pipes) or concurrency (object-storage pipes). */
export type MetricField = 'replicas' | 'concurrency';

/** What a pipe does when its metric is unavailable: keep the applied value, the baseline, or fixed values. */
export type MetricFallback =
  | { readonly kind: 'hold' }
  | { readonly kind: 'baseline' }
  | { readonly kind: 'fixed'; readonly values: ScalingValues };

/** Target tracking on a PromQL instant query, inside the bounds the windows or the baseline set. */
export interface MetricSpec {
  readonly query: string;
  /** Sample label -> template of the value this pipe's sample has (`{{ .labels.x }}`, `{{ .name }}`). */
  readonly match: Readonly<Record<string, string>>;
  /** Metric value per unit of the field: recommended = ceil(value / target). */
  readonly targetPer: Partial<Record<MetricField, number>>;
  readonly onError: MetricFallback;
  /** A value older than this counts as unavailable. */
  readonly staleAfterMs: number;
  /** Relative change (0.1 = 10%) below which the applied value is kept. */
  readonly tolerance: number;
  /** Forecast from the metric's history (forecast.ts): absent, the policy only reacts. */
  readonly forecast?: ForecastSpec;
}

/** `metric.forecast`: how much history the model learns from, how far it predicts, what it may do. */
export interface ForecastSpec {
  readonly historyMs: number;
  readonly horizonMs: number;
  /** forecastOnly: exported, changes nothing; scale: raises the target ahead of the load. */
  readonly mode: 'forecastOnly' | 'scale';
  /** A new forecast (one range query per policy, fleet-wide) this often. */
  readonly refreshMs: number;
  /** How long a change takes to give capacity: the forecast looks this far ahead, plus the lead. */
  readonly actuationMs: number;
}

/** The forecast of a pipe's metric: predicted values (epoch ms, value) over the horizon, or why there is none. */
export type ForecastReading =
  | {
      readonly points: readonly (readonly [number, number])[];
      /** The hourly-peak error of the policy's forecasts over the last week (forecast-score.ts), when known. */
      readonly peakError?: number;
    }
  | { readonly error: string };

/** This pipe's value of its policy's metric at the tick (what the evaluate job passes in). */
export type MetricReading =
  { readonly value: number; readonly at: number; readonly forecast?: ForecastReading } | { readonly error: string };

/** What the metric did in a decision: for plan, status and the metric gauges. */
export interface MetricOutcome {
  readonly field: MetricField;
  readonly value?: number;
  readonly error?: string;
  /** The bounds the metric moves within (window or baseline; a fixed value is min = max). */
  readonly bounds: { readonly min: number; readonly max: number };
  /** ceil(value / target) within the bounds, or the fallback's value (raised by a forecast in scale mode). */
  readonly recommended: number;
  /** The forecast's peak over the actuation time and lead, and the value it would set (a forecast policy). */
  readonly forecast?: ForecastOutcome;
}

export type ForecastOutcome =
  | {
      readonly mode: ForecastSpec['mode'];
      readonly value: number;
      /** ceil(peak / target) within the bounds: what the forecast would set. */
      readonly recommended: number;
      /** In scale mode, whether it raised the reactive recommendation. */
      readonly raised: boolean;
      readonly peakError?: number;
    }
  | { readonly mode: ForecastSpec['mode']; readonly error: string };

export interface Policy {
  readonly name: string;
  /** Target outside every window. */
  readonly baseline: Target;
  readonly windows: readonly Window[];
  readonly behavior: Behavior;
  readonly metric?: MetricSpec;
  /** When this policy sends no scale-downs, or no changes (freeze.ts). */
  readonly freezes?: readonly Freeze[];
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
  /** An operator's (or onDrift's) values standing in for the policy's target until they expire. */
  readonly override?: Override;
  /** The state of the pipe's service when known (the daemon reads it before a change). */
  readonly serviceState?: ServiceState;
  /** The pipe's metric value at this instant, for a policy with a metric (absent: not fetched). */
  readonly metric?: MetricReading;
  /**
   * Lead time: what the schedule sets up to this instant may raise the target now (scale-ups only).
   * For `leadTime: auto` the caller takes it from the key's lead plan (leadUntil() in lead.ts);
   * absent, decide() uses now + a fixed leadTime, and no lead for auto.
   */
  readonly leadUntil?: number;
}

/** The reasons decide() skips a pipe for, in the order it checks them (docs/decisions.md#skips). */
export const SKIP_REASON_CODES = [
  'unknown_pipe',
  'paused',
  'service_not_running',
  'pipe_state',
  'endpoint_not_ready',
] as const;

/** Every code a decision's reasons carry, each emitted by decide() (docs/decisions.md#reason-codes). */
export const REASON_CODES = [
  'window',
  'baseline',
  'pipe_bound',
  'platform_range',
  'cooldown',
  'max_step',
  'stabilization',
  'kind',
  'pipe_state',
  'endpoint_not_ready',
  'paused',
  'unknown_pipe',
  'unchanged',
  'service_not_running',
  'metric',
  'metric_unavailable',
  'tolerance',
  'lead_time',
  'forecast',
  'override',
  'freeze',
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

export interface Reason {
  readonly code: ReasonCode;
  readonly field?: ScalingField;
  /** pipe_bound: which of the pipe's bounds moved the value (a max lowers it, a min raises it). */
  readonly bound?: 'min' | 'max';
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
  /** Present when the policy has a metric and the pipe takes its field. */
  readonly metric?: MetricOutcome;
  /** Present when lead time raised the target ahead of a boundary: the first such boundary and its winning windows. */
  readonly lead?: LeadOutcome;
  /** Present when a freeze held a change back: which freezes, what they held, until when. */
  readonly freeze?: FreezeOutcome;
  /** Present when an override set some fields of the target. */
  readonly override?: { readonly id: string; readonly until: number; readonly fields: readonly ScalingField[] };
}

export interface LeadOutcome {
  readonly boundary: number;
  /** The windows that win at the boundary (empty: the baseline). */
  readonly windows: readonly string[];
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
  /** Name of an API key in `api.keys`; `default` is the key of `api.keyId`/`api.keySecret`. A pipe
   *  that names a pool has here the pool's key it was given (key-pool.ts), and the pool in `pool`. */
  readonly key: string;
  /** The pool the pipe named (`key: <pool>`), when it named one. */
  readonly pool?: string;
  readonly bounds: Bounds;
  /** Declared kind (`pipes[].kind`): lets plan and simulate work from the policy when the pipe is not read. */
  readonly kind?: ScalableKind;
  /** Free labels (`pipes[].labels`), e.g. the consumer group a metric's `match` names. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Paused in the config (`pipes[].paused: <reason>`): survives any Redis; `resume` cannot lift it. */
  readonly paused?: string;
}

/** What the policy engine reads of an API key: its limit, and the pool it serves. */
export interface KeyLimits {
  /** The platform's limit for this key (default 10 per 10 s). */
  readonly rateLimit: { readonly requests: number; readonly perMs: number };
  /** The pool this key serves (`api.keys.<name>.pool`): pipes that name the pool are spread over its keys. */
  readonly pool?: string;
}

/**
 * The part of the loaded config the policy engine reads: pipes, policies, the evaluation cadence
 * and each key's limits. The operational config (src/config's Config: secrets, Redis, telemetry)
 * is a superset, passed where this is asked for.
 */
export interface ScalingConfig {
  readonly api: { readonly keys: Readonly<Record<string, KeyLimits>> };
  readonly evaluate: {
    readonly cron: string;
    readonly reconcileMs: number;
    /** Share of each key's request budget reconcile reads may take (default 0.25, key-budget.ts). */
    readonly readShare?: number;
    /** What leadTime auto counts on between sending a scale-up and seeing it at target
     *  (lead-plan.ts); absent: ACTUATION_DEFAULTS. */
    readonly actuation?: ActuationSettings;
  };
  readonly pipes: readonly PipeConfig[];
  readonly policies: Readonly<Record<string, Policy>>;
}

/** `evaluate.actuation`: how long a scale-up takes from sent to confirmed at target. */
export interface ActuationSettings {
  /** Counted on until a pipe (or its kind) has `minSamples` measurements. */
  readonly expectedMs: number;
  /** The most the plan adds for one pipe, measured or not. */
  readonly maxMs: number;
  /** Measurements a pipe's (or its kind's) p95 needs before it replaces `expectedMs`. */
  readonly minSamples: number;
  /** false: the lead plan counts on `expectedMs` only, whatever was measured (default true). */
  readonly measured?: boolean;
  /** The soonest a confirmation read follows a change (default 15 s, confirmation.ts FIRST_READ_MS):
   *  the answer itself was a read, and the live platform's transient 0/null values last seconds. */
  readonly firstReadMs?: number;
}

/** The longest lead a window's scale-ups may start before it (behavior.scaleUp.leadTime). */
export const MAX_LEAD_MS = 24 * 3_600_000;

// The policy's operator-facing shapes: drift handling, freezes and overrides (drift.ts, freeze.ts and
// override.ts act on them).

export type OnDrift =
  | { readonly kind: 'revert' }
  | { readonly kind: 'hold'; readonly durationMs: number }
  | { readonly kind: 'adoptAsFloor' };

export type FreezeScope = 'scaleDown' | 'all';

export interface Freeze {
  readonly scope: FreezeScope;
  /** When: a window (its priority and target unused). */
  readonly window: Window;
}

/** What the freezes of a decision held: for plan, simulate, diff and status. */
export interface FreezeOutcome {
  /** The names of the freezes in force that held something. */
  readonly freezes: readonly string[];
  /** Per field, the value the policy wanted and the freeze held back. */
  readonly held: ScalingValues;
  /** The end of the latest of those freezes: when the held values go out at the earliest. */
  readonly until: number;
}

export interface OverrideRamp {
  /** Per field, how far each step moves toward the override's value. */
  readonly step: ScalingValues;
  readonly everyMs: number;
  /** What the pipe had when the override was set: the ramp starts there. */
  readonly start: ScalingValues;
}

export interface Override {
  /** Unique per override: a newer one supersedes (events, status). */
  readonly id: string;
  readonly values: ScalingValues;
  readonly setAt: number;
  /** Ends here (exclusive): from this instant the policy's target is back. */
  readonly until: number;
  readonly reason: string;
  /** operator: `pipescaler override`; manual: a change made by hand kept by onDrift. */
  readonly source: 'operator' | 'manual';
  /** set: the values replace the target; floor: the target goes no lower than them. */
  readonly mode: 'set' | 'floor';
  readonly ramp?: OverrideRamp;
}

/** What a policy lets overrides do (`behavior.overrides`): any value, or scale-ups only. */
export type OverridesAllowed = 'any' | 'scaleUpOnly';
