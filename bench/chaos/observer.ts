// A recording pass-through in front of the embedded cloud: the replicas talk to it, it forwards
// every request unchanged and records each scaling PATCH as sent on the wire, including the ones
// the cloud then fails (500/503/429) or resets. So "no value ever sent outside the platform's
// ranges" covers every byte the daemon sent, without a hook in src/cloud. A reset by the cloud is
// passed on as a reset (the client's socket is destroyed too), latency passes through as is.
import { Agent, createServer, request, type IncomingHttpHeaders } from 'node:http';
import { once } from 'node:events';
import { SCALING_FIELDS, limitViolation } from '../../src/api/index.js';

export interface SentPatch {
  /** Epoch ms the request reached the observer. */
  readonly at: number;
  readonly pipeId: string;
  /** The parsed body; `{}` for a read (an empty PATCH). */
  readonly body: Record<string, unknown>;
  readonly idempotencyKey: string | undefined;
  /** HTTP status, or 'reset' when the cloud dropped the connection. */
  status: number | 'reset' | null;
}

export interface Observer {
  readonly url: string;
  readonly patches: SentPatch[];
  /** One line per out-of-range (or non-numeric) value sent, e.g. "pipe ...: replicas must be between 1 and 10". */
  readonly violations: string[];
  /** Scaling PATCHes that reached a pipe while another one for the same pipe was still open. */
  readonly overlaps: () => number;
  close(): Promise<void>;
}

const SCALING_PATH = /\/pipes\/([^/]+)\/scaling$/;
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade'];

function forwardable(h: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(h).filter(([k]) => !HOP_BY_HOP.includes(k)));
}

export async function startObserver(target: string): Promise<Observer> {
  const up = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const patches: SentPatch[] = [];
  const violations: string[] = [];
  const open = new Map<string, number>();
  let overlaps = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = (req.url ?? '/').split('?')[0]!;
      const m = req.method === 'PATCH' ? SCALING_PATH.exec(path) : null;
      let record: SentPatch | null = null;
      if (m) {
        let body: Record<string, unknown> = {};
        try {
          body = raw.length > 0 ? (JSON.parse(raw.toString()) as Record<string, unknown>) : {};
        } catch {
          violations.push(`pipe ${m[1]}: body is not JSON`);
        }
        const key = req.headers['idempotency-key'];
        record = {
          at: Date.now(),
          pipeId: m[1]!.toLowerCase(),
          body,
          idempotencyKey: Array.isArray(key) ? key[0] : key,
          status: null,
        };
        patches.push(record);
        const pipeId = record.pipeId;
        const before = open.get(pipeId) ?? 0;
        if (before > 0) overlaps += 1;
        open.set(pipeId, before + 1);
        res.once('close', () => open.set(pipeId, (open.get(pipeId) ?? 1) - 1));
        for (const f of SCALING_FIELDS) {
          const v = body[f];
          if (v === undefined || v === null) continue;
          const bad = limitViolation(f, v);
          if (bad) violations.push(`pipe ${record.pipeId}: ${bad} (sent ${JSON.stringify(v)})`);
        }
        const unknown = Object.keys(body).filter((k) => !(SCALING_FIELDS as readonly string[]).includes(k));
        if (unknown.length > 0) violations.push(`pipe ${record.pipeId}: unknown members ${unknown.join(', ')}`);
      }
      const upstream = request(
        {
          host: up.hostname,
          port: up.port,
          method: req.method,
          path: req.url,
          agent,
          headers: { ...forwardable(req.headers), 'content-length': String(raw.length) },
        },
        (ures) => {
          if (record) record.status = ures.statusCode ?? null;
          res.writeHead(ures.statusCode ?? 502, forwardable(ures.headers));
          ures.pipe(res);
        },
      );
      upstream.on('error', () => {
        if (record) record.status = 'reset';
        req.socket.destroy();
      });
      upstream.end(raw);
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('chaos observer: no TCP address');
  return {
    url: `http://127.0.0.1:${addr.port}`,
    patches,
    violations,
    overlaps: () => overlaps,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      agent.destroy();
    },
  };
}
