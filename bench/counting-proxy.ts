// A pass-through HTTP proxy on 127.0.0.1 that counts the scaling PATCHes going through it, told
// apart by body: an empty one (`{}`, a read) or one that asks for a change. The cloud's own stats
// cannot tell them apart.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

export interface PatchCounts {
  changes: Record<string, number>;
  /** Change PATCHes per pipe id, any status. */
  byPipe: Record<string, number>;
  reads: Record<string, number>;
  /**
   * A pipe's first contact sent as a change (the daemon knows the pipe's kind, README "First
   * contact is the first change") that changed nothing or was refused, by status: the contact's
   * request, not a change. Kept only when the proxy is told the pipes' starting values.
   */
  contacts: Record<string, number>;
  other: number;
}

/** A pipe's scaling values by field, as the platform reports them. */
export type Scaling = Readonly<Record<string, number | null | undefined>>;

export interface CountingProxy {
  readonly url: string;
  readonly counts: PatchCounts;
  reset(): void;
  close(): Promise<void>;
}

const isRead = (body: string): boolean => {
  try {
    const v = JSON.parse(body || '{}') as Record<string, unknown>;
    return Object.values(v).every((x) => x === null || x === undefined);
  } catch {
    return false;
  }
};

/** Called with every scaling PATCH's answer: the pipe id, whether it was a read, the status. */
export type OnPatch = (pipeId: string, read: boolean, status: number) => void;

/** One request through the proxy, with its times (epoch ms): when the proxy received it and when
 *  the cloud's answer came back, and the cloud's window as that answer reported it. */
export interface ProxyTraceEntry {
  readonly receivedAt: number;
  readonly answeredAt: number;
  /** 'read', 'change' (scaling PATCHes) or the method and path's last segment (a services list). */
  readonly what: string;
  readonly pipeId: string | null;
  readonly status: number;
  readonly remaining: number | null;
  readonly resetSeconds: number | null;
}

/**
 * `start`: each pipe's scaling before the run, by lower-case pipe id. With it, a change PATCH sent
 * before the pipe's first answer that leaves its values as they were (2xx) or is refused (4xx)
 * counts as a first contact, not a change: without reading first the daemon cannot know the pipe
 * already has them (or is Completed), and the request is the one the contact costs anyway.
 */
export async function countingProxy(
  target: string,
  onPatch?: OnPatch,
  start?: ReadonlyMap<string, Scaling>,
  trace?: (e: ProxyTraceEntry) => void,
): Promise<CountingProxy> {
  const pool = new Pool(target, { keepAliveTimeout: 30_000 });
  const counts: PatchCounts = { changes: {}, byPipe: {}, reads: {}, contacts: {}, other: 0 };
  const answered = new Set<string>();
  const firstContact = (pipeId: string, body: string, status: number): boolean => {
    const before = start?.get(pipeId.toLowerCase());
    if (!before || answered.has(pipeId.toLowerCase())) return false;
    if (status >= 400 && status < 500) return true;
    if (status < 200 || status >= 300) return false;
    const sent = JSON.parse(body) as Record<string, unknown>;
    return Object.entries(sent).every(([f, v]) => v === null || v === undefined || before[f] === v);
  };
  const server = createServer((req, res) => {
    const receivedAt = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      pool
        .request({ path: req.url ?? '/', method: req.method as 'GET', headers, body: body.length > 0 ? body : null })
        .then(async (up) => {
          const text = await up.body.text();
          const pipeId = /\/pipes\/([^/]+)\/scaling/.exec(req.url ?? '')?.[1];
          const read = req.method === 'PATCH' && isRead(body);
          const contact =
            req.method === 'PATCH' && !read && pipeId !== undefined && firstContact(pipeId, body, up.statusCode);
          if (pipeId && up.statusCode >= 200 && up.statusCode < 300) answered.add(pipeId.toLowerCase());
          if (contact) counts.contacts[up.statusCode] = (counts.contacts[up.statusCode] ?? 0) + 1;
          const bucket = req.method !== 'PATCH' || contact ? null : read ? counts.reads : counts.changes;
          if (bucket) bucket[up.statusCode] = (bucket[up.statusCode] ?? 0) + 1;
          if (bucket === counts.changes && pipeId) counts.byPipe[pipeId] = (counts.byPipe[pipeId] ?? 0) + 1;
          else if (!contact) counts.other += 1;
          if (bucket && pipeId) onPatch?.(pipeId, bucket === counts.reads, up.statusCode);
          if (trace) {
            const header = (h: string) => {
              const v = Number(up.headers[h]);
              return up.headers[h] === undefined || !Number.isFinite(v) ? null : v;
            };
            trace({
              receivedAt,
              answeredAt: Date.now(),
              what:
                req.method === 'PATCH' && pipeId
                  ? read
                    ? 'read'
                    : 'change'
                  : `${req.method} ${(req.url ?? '').split('/').pop()}`,
              pipeId: pipeId ?? null,
              status: up.statusCode,
              remaining: header('x-ratelimit-remaining'),
              resetSeconds: header('x-ratelimit-reset'),
            });
          }
          const out: Record<string, string | string[]> = {};
          for (const [k, v] of Object.entries(up.headers))
            if (v !== undefined && k !== 'connection' && k !== 'transfer-encoding') out[k] = v;
          res.writeHead(up.statusCode, out);
          res.end(text);
        })
        .catch(() => res.destroy());
    });
  });
  // Idle connections kept as long as the embedded cloud's server keeps them (fastify's 72 s), not
  // Node's 5 s. The daemon's pool closes an idle connection 2 s before the server's Keep-Alive
  // says; the proxy shares the daemon's loaded process, and a change sent near that edge could
  // meet the proxy closing the connection: a network error for a change the cloud never saw
  // (bench actuation at e908318: 2 to 5 of 1,200 changes a boundary, each then waiting out
  // evaluate.actuation.max).
  server.keepAliveTimeout = 72_000;
  server.headersTimeout = 73_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    reset() {
      counts.changes = {};
      counts.byPipe = {};
      counts.reads = {};
      counts.contacts = {};
      counts.other = 0;
      answered.clear();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
    },
  };
}
