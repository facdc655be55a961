// Check 1, real 429s per key: the limiter's own, not the injected ones; the daemon's budget must
// keep every key under the platform's limit. Each is placed in its key's window among the requests
// the observer passed on (which replica sent what).
import type { LimitedRequest } from '../../../src/cloud/index.js';
import type { SentRequest } from '../observer.js';
import { iso } from './changes.js';

export interface LimitedCheck {
  readonly total: number;
  /** Per key (its config name, else its id). */
  readonly perKey: Readonly<Record<string, number>>;
  /** Each 429 the cloud kept (the first LIMITED_EXAMPLES), placed in its key's window: the request
   *  refused and the replica that sent it, and the key's requests in that window per replica. */
  readonly examples: readonly string[];
}

const LIMITED_EXAMPLES = 10;

/** The cloud's real-limiter 429s per key id (stats().limited), named by the config's key names;
 *  each one it kept (stats().limitedRequests) placed among the observer's `requests`. */
export function realLimited(
  limited: Readonly<Record<string, number>>,
  keyNames: Readonly<Record<string, string>>,
  refused: readonly LimitedRequest[] = [],
  requests: readonly SentRequest[] = [],
): LimitedCheck {
  const perKey: Record<string, number> = {};
  for (const name of Object.values(keyNames)) perKey[name] = 0;
  let total = 0;
  for (const [id, n] of Object.entries(limited)) {
    const name = keyNames[id] ?? id;
    perKey[name] = (perKey[name] ?? 0) + n;
    total += n;
  }
  const examples = refused.slice(0, LIMITED_EXAMPLES).map((r) => placeLimited(r, keyNames, requests));
  return { total, perKey, examples };
}

/** The key's requests the observer passed on between `from` and `to` (its instants, epoch ms). */
export function keyRequests(requests: readonly SentRequest[], keyId: string, from: number, to: number): SentRequest[] {
  return requests.filter((q) => q.keyId === keyId && q.at >= from && q.at <= to);
}

/** The observer's record of a refused request: same key, method and path, answered 429, the
 *  nearest before the cloud's instant (the observer sees it first). */
export function refusedRequest(r: LimitedRequest, requests: readonly SentRequest[]): SentRequest | undefined {
  let best: SentRequest | undefined;
  for (const q of requests) {
    if (q.keyId !== r.keyId || q.method !== r.method || q.path !== r.path || q.status !== 429) continue;
    if (q.at > r.at) continue;
    if (!best || q.at > best.at) best = q;
  }
  return best;
}

const counted = (items: readonly string[]): string => {
  const n = new Map<string, number>();
  for (const i of items) n.set(i, (n.get(i) ?? 0) + 1);
  return [...n].map(([k, c]) => `${k} ${c}`).join(', ');
};

/** One line: the 429's key and instant, the request it refused and its replica, and the key's
 *  requests in the cloud's window (from its start to the 429) by replica and by status. */
export function placeLimited(
  r: LimitedRequest,
  keyNames: Readonly<Record<string, string>>,
  requests: readonly SentRequest[],
): string {
  const path = r.path.replace(/^\/v1\/organizations\/[^/]+\/services\/[^/]+/, '…');
  const by = refusedRequest(r, requests)?.replica ?? '?';
  const inWindow = keyRequests(requests, r.keyId, r.windowStart, r.at);
  return (
    `${keyNames[r.keyId] ?? r.keyId} at ${iso(r.at)}: ${r.method} ${path} (request ${r.requestId}) by ${by}; ` +
    `window from ${iso(r.windowStart)}: ${inWindow.length} requests of the key reached the observer in it ` +
    `(by replica: ${counted(inWindow.map((q) => q.replica ?? '?')) || '-'}; answered: ${counted(inWindow.map((q) => String(q.status ?? 'open'))) || '-'})`
  );
}
