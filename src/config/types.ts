// The loaded, validated, normalized config (config/pipescaler.yaml) as the daemon and the CLI run
// it: API keys with their secrets, Redis, telemetry, Prometheus. The policy engine takes only its
// narrow view of it (src/policy's ScalingConfig), which this type extends.
import type { KeyLimits, ScalingConfig } from '../policy/index.js';

/** `metrics.prometheus`: where metric policies query. Secrets stay in their files (read per request). */
export interface PrometheusConfig {
  readonly url: string;
  readonly timeoutMs: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly bearerTokenFile?: string;
  readonly basicAuth?: { readonly username: string; readonly passwordFile: string };
}

export interface ApiKeyConfig extends KeyLimits {
  readonly keyId: string;
  /** Resolved from the environment or `keySecretFile`; never logged. */
  readonly keySecret: string;
}

/**
 * Where the daemon's Redis is (src/config/redis.ts). `url` names the servers in every mode: redis://,
 * rediss://, redis+sentinel://host:port,.../<master name>, redis+cluster://host:port,...; the list
 * forms of the config (redis.sentinels, redis.cluster) are turned into such a URL.
 */
export interface RedisSettings {
  readonly url: string;
  /** Of every key (BullMQ's and ours); a cluster needs a hash tag: "{pipescaler}". */
  readonly prefix: string;
  readonly username?: string;
  /** The data nodes' password, from the environment or a file; never logged. */
  readonly password?: string;
  /** The sentinels' own password (Sentinel only), from the environment or a file; never logged. */
  readonly sentinelPassword?: string;
}

/** How long the scaling history keeps a pipe's outcomes (src/history). */
export interface HistorySettings {
  readonly retentionMs: number;
  /** Entries kept per pipe at most (identical repeats collapse into one). */
  readonly maxEntries: number;
  /** Entries kept for the whole fleet at most: each pipe keeps its share (history/store.ts historyLimits). */
  readonly maxTotalEntries?: number;
}

/** One notification sink (src/notify). */
export interface NotifySink {
  readonly name: string;
  readonly type: 'webhook' | 'slack' | 'cloudevents';
  /** A Slack URL is a credential (resolved from the environment or a file); never logged. */
  readonly url: string;
  /** The webhook's HMAC-SHA256 key; never logged. */
  readonly secret?: string;
  /** Outcome names sent (null: all). */
  readonly events: readonly string[] | null;
  /** Pipe names or globs ("orders-*") sent (null: all). */
  readonly pipes: readonly string[] | null;
  /** The least severity sent. */
  readonly severity: 'info' | 'warning' | 'error';
  readonly timeoutMs: number;
  readonly attempts: number;
  readonly backoffMs: number;
}

export interface NotifySettings {
  /** Outcomes of one sink within this long go out as one message (a summary when several). */
  readonly coalesceMs: number;
  readonly sinks: readonly NotifySink[];
}

/** `telemetry.auth` resolved: the credentials /metrics and /history ask for (telemetry-auth.ts). */
export type TelemetryAuth =
  | { readonly type: 'bearer'; readonly token: string }
  | { readonly type: 'basic'; readonly username: string; readonly password: string };

/** The loaded, validated, normalized config (config/pipescaler.yaml). */
export interface Config extends ScalingConfig {
  readonly api: {
    /** 'embedded' runs the embedded cloud in-process from `fixtures`. */
    readonly baseUrl: string;
    readonly fixtures: string;
    readonly timeoutMs: number;
    /** Answers larger than this (bytes) fail API_BAD_RESPONSE unread; default 4 MiB. */
    readonly maxResponseBytes?: number;
    /** A key without a 2xx for this long checks in with a services list (key-checks.ts); 0: never. Default 1 min. */
    readonly checkEveryMs?: number;
    /** `default` plus every entry of `api.keys`. */
    readonly keys: Readonly<Record<string, ApiKeyConfig>>;
  };
  readonly redis: RedisSettings;
  readonly evaluate: ScalingConfig['evaluate'] & { readonly concurrency: number };
  readonly telemetry: {
    readonly listen: string;
    readonly logLevel: string;
    /** Every pipe-level family per pipe (else per policy or key: telemetry/pipe-labels.ts). */
    readonly perPipeDetail?: boolean;
    /** Credentials /metrics and /history ask for (absent: open); the secret is never logged. */
    readonly auth?: TelemetryAuth;
  };
  readonly dryRun: boolean;
  /** null: no metric source configured (no policy may have a metric then). */
  readonly metrics?: { readonly prometheus: PrometheusConfig } | null;
  /** Absent: the defaults (config/notify.ts HISTORY_DEFAULTS). */
  readonly history?: HistorySettings;
  /** Absent: no sinks. */
  readonly notify?: NotifySettings;
}
