// A pass-through proxy in front of the embedded cloud that can answer a request itself or edit the
// cloud's answer: for what the cloud never sends on purpose (an epoch time in X-RateLimit-Reset, an
// envelope whose requestId is not a uuid).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export interface Seen {
  method: string;
  url: string;
  body: string;
  /** The request's Idempotency-Key header, when it has one. */
  idempotencyKey?: string;
  /** The client had gone (it gave up, timed out) when the answer was ready: never delivered. */
  undelivered?: boolean;
}

export type Tamper = (req: Seen, upstream: () => Promise<Answer>) => Promise<Answer>;

export interface TamperProxy {
  readonly url: string;
  readonly seen: Seen[];
  tamper: Tamper;
  close(): Promise<void>;
}

export const passThrough: Tamper = (_req, upstream) => upstream();

export async function tamperProxy(target: string): Promise<TamperProxy> {
  const pool = new Pool(target);
  const seen: Seen[] = [];
  const proxy = { tamper: passThrough };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const key = req.headers['idempotency-key'];
      const info: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        body,
        ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
      };
      seen.push(info);
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      const upstream = async (): Promise<Answer> => {
        const up = await pool.request({
          path: info.url,
          method: info.method,
          headers,
          body: body.length > 0 ? body : null,
        });
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(up.headers)) {
          if (typeof v === 'string' && k !== 'connection' && k !== 'transfer-encoding' && k !== 'content-length')
            out[k] = v;
        }
        return { status: up.statusCode, headers: out, text: await up.body.text() };
      };
      proxy
        .tamper(info, upstream)
        .then((a) => {
          if (res.destroyed || req.socket.destroyed) info.undelivered = true;
          res.writeHead(a.status, a.headers);
          res.end(a.text);
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
    },
  });
}
