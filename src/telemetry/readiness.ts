// Readiness from the daemon's events: Redis ready, a config loaded, and the platform's API heard
// from lately: within two check intervals of the API keys (key-checks.ts: a key with no 2xx for
// api.checkEvery checks in) and 15 s, or with checks off (or every key refused the list, so none
// checks) within the reconcile interval and its grace. /readyz and pipescaler_ready read the same report.
import type { DaemonEmitter } from '../daemon/index.js';

export interface ReadinessReport {
  readonly redis: boolean;
  readonly config: boolean;
  readonly api: boolean;
  /** Set while Redis has lost the daemon's state or may (data_lost, eviction_policy): not ready, scaling held. */
  readonly redisState?: string;
  /** API keys whose last check the platform refused with 401 (a wrong or rotated secret): an
   *  answer, but no proof the API works for us, so `api` fails while any is. */
  readonly rejectedKeys?: readonly string[];
}

export const READINESS_CHECKS = ['redis', 'config', 'api'] as const satisfies readonly (keyof ReadinessReport)[];

export interface ReadinessOptions {
  /** How recent the last API answer must be; a function when a reload may change it. */
  readonly reconcileMs: number | (() => number);
  /** Slack past reconcileMs: a read that falls due at the interval lands at a later tick, behind
   *  the queue (default 60 s); without it a daemon with few pipes would flap at every interval. */
  readonly graceMs?: number;
  /** How recent the last API answer must be, replacing reconcileMs + graceMs when it gives a number
   *  (the daemon: two api.checkEvery and 15 s while checks are on) and some key checks in. */
  readonly contactWindowMs?: () => number | null;
  /** True when the daemon loaded its config before subscribing (else the first successful reload counts). */
  readonly configLoaded?: boolean;
  /** True when Redis was already ready before subscribing. */
  readonly redisReady?: boolean;
  /** Epoch ms. */
  readonly now?: () => number;
}

export interface Readiness {
  readonly report: () => ReadinessReport;
  /** Unsubscribe from the emitter. */
  close(): void;
}

export function createReadiness(emitter: DaemonEmitter, options: ReadinessOptions): Readiness {
  const now = options.now ?? Date.now;
  const reconcileMs =
    typeof options.reconcileMs === 'function' ? options.reconcileMs : () => options.reconcileMs as number;
  const graceMs = options.graceMs ?? 60_000;
  let redis = options.redisReady ?? false;
  let config = options.configLoaded ?? false;
  let lastContact: number | undefined;
  let redisState: string | undefined;
  // Whether some API key checks in every api.checkEvery (key-checks.ts): only then is an answer due
  // within contactWindowMs. A key refused the list stops its checks, and a quiet fleet's next
  // answer is a reconcile read.
  let checking = true;
  const onChecking = ({ keys }: { keys: number }): void => {
    checking = keys > 0;
  };
  // A 401 on a key's check (key-checks.ts): a 403 refuses the list only, its pipes may still scale.
  const rejected = new Set<string>();
  const onKey = ({ key, refused, status }: { key: string; refused: boolean; status?: number }): void => {
    if (refused && status === 401) rejected.add(key);
    else rejected.delete(key);
  };
  const onState = ({ lost, cause }: { lost: boolean; cause?: string }): void => {
    redisState = lost ? (cause ?? 'unknown') : undefined;
  };

  const onRedis = ({ ready }: { ready: boolean }): void => {
    redis = ready;
  };
  // A failed reload keeps the previous config in force, so only success changes this.
  const onReload = ({ result }: { result: 'success' | 'failure' }): void => {
    if (result === 'success') config = true;
  };
  const onContact = ({ at }: { at: number }): void => {
    lastContact = Math.max(lastContact ?? at, at);
  };
  emitter.on('redis:status', onRedis);
  emitter.on('config:reload', onReload);
  emitter.on('api:contact', onContact);
  emitter.on('redis:state', onState);
  emitter.on('api:checking', onChecking);
  emitter.on('api:key', onKey);

  return {
    report: () => ({
      redis,
      config,
      api:
        rejected.size === 0 &&
        lastContact !== undefined &&
        now() - lastContact <= ((checking ? options.contactWindowMs?.() : null) ?? reconcileMs() + graceMs),
      ...(redisState !== undefined ? { redisState } : {}),
      ...(rejected.size > 0 ? { rejectedKeys: [...rejected].sort() } : {}),
    }),
    close: () => {
      emitter.off('redis:status', onRedis);
      emitter.off('config:reload', onReload);
      emitter.off('api:contact', onContact);
      emitter.off('redis:state', onState);
      emitter.off('api:checking', onChecking);
      emitter.off('api:key', onKey);
    },
  };
}

/** Past two check intervals: one check that gets no answer (a timeout) does not make the daemon unready. */
export const CHECK_SLACK_MS = 15_000;

/** How recent an API answer /readyz wants while key checks run every `checkEveryMs` (null: off). */
export function checkContactWindowMs(checkEveryMs: number): number | null {
  return checkEveryMs > 0 ? 2 * checkEveryMs + CHECK_SLACK_MS : null;
}

export function failedChecks(report: ReadinessReport): string[] {
  const failed: string[] = READINESS_CHECKS.filter((c) => !report[c]);
  // named with its cause: "redis_state:data_lost"
  if (report.redisState !== undefined) failed.push(`redis_state:${report.redisState}`);
  // named with the key: "api_key_rejected:default"
  for (const key of report.rejectedKeys ?? []) failed.push(`api_key_rejected:${key}`);
  return failed;
}
