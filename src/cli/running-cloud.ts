// Which cloud `plan` and `simulate` read on `api.baseUrl: embedded`: the one a running daemon of the
// same Redis prefix scales (its heartbeat names the URL and the admin token of its embedded cloud),
// else the fixtures file, the cloud a daemon would start from. Either way the command says which in
// one line, so an override the daemon applied is what plan sees, and a plan never tells another
// story than the daemon without saying why.
import { CloudStateSchema, type CloudState } from '../cloud/index.js';
import type { Config } from '../config/index.js';
import { readReplicas } from '../daemon/index.js';
import { readFromRedis } from './stored-overrides.js';

export type RunningCloud =
  | { readonly url: string; readonly state: CloudState }
  /** Why the fixtures are read: no daemon runs, Redis could not be read, or the cloud did not answer. */
  | { readonly none: string };

/** What the running demo daemon's embedded cloud holds now, or why there is none to read. */
export async function readRunningCloud(config: Config, file: string): Promise<RunningCloud> {
  const read = await readFromRedis(config, file, (store) => readReplicas(store.redis, store.keys));
  if ('unreadable' in read) return { none: `no daemon looked for: ${read.unreadable}` };
  const beat = read.value.find((b) => b.embedded !== undefined);
  if (beat?.embedded === undefined) return { none: 'no daemon running on this Redis prefix' };
  const { url, adminToken } = beat.embedded;
  try {
    const res = await fetch(new URL('/admin/state', url), {
      headers: { authorization: `Bearer ${adminToken}` },
      signal: AbortSignal.timeout(config.api.timeoutMs),
    });
    if (!res.ok) return { none: `the running daemon's cloud at ${url} answered ${res.status}` };
    const body = (await res.json()) as { result?: unknown };
    const state = CloudStateSchema.safeParse(body.result);
    if (!state.success) return { none: `the running daemon's cloud at ${url} answered an unexpected state` };
    return { url, state: state.data };
  } catch (err) {
    return { none: `the running daemon's cloud at ${url} did not answer (${(err as Error).name})` };
  }
}

/** `text` with the read line after its first line (the command's headline). */
export function withReadLine(text: string, line: string): string {
  const nl = text.indexOf('\n');
  return nl < 0 ? `${text}\n${line}` : `${text.slice(0, nl)}\n${line}${text.slice(nl)}`;
}
