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
  other: number;
}

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

export async function countingProxy(target: string, onPatch?: OnPatch): Promise<CountingProxy> {
  const pool = new Pool(target, { keepAliveTimeout: 30_000 });
  const counts: PatchCounts = { changes: {}, byPipe: {}, reads: {}, other: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      pool.request({ path: req.url ?? '/', method: req.method as 'GET', headers, body: body.length > 0 ? body : null })
        .then(async (up) => {
          const text = await up.body.text();
          const bucket = req.method !== 'PATCH' ? null : isRead(body) ? counts.reads : counts.changes;
          if (bucket) bucket[up.statusCode] = (bucket[up.statusCode] ?? 0) + 1;
          const pipeId = /\/pipes\/([^/]+)\/scaling/.exec(req.url ?? '')?.[1];
          if (bucket === counts.changes && pipeId) counts.byPipe[pipeId] = (counts.byPipe[pipeId] ?? 0) + 1;
          else counts.other += 1;
          if (bucket && pipeId) onPatch?.(pipeId, bucket === counts.reads, up.statusCode);
          const out: Record<string, string | string[]> = {};
          for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && k !== 'connection' && k !== 'transfer-encoding') out[k] = v;
          res.writeHead(up.statusCode, out);
          res.end(text);
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    reset() {
      counts.changes = {};
      counts.byPipe = {};
      counts.reads = {};
      counts.other = 0;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
    },
  };
}
