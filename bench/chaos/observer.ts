// A recording pass-through in front of the embedded cloud: the replicas talk to it, it forwards
// every request unchanged and records each scaling PATCH as sent on the wire, including the ones
// the cloud then fails (500/503/429) or resets. So "no value ever sent outside the platform's
// ranges" covers every byte the daemon sent, without a hook in src/cloud. A reset by the cloud is
// passed on as a reset (the client's socket is destroyed too), latency passes through as is.
// Each 200 keeps the scaling its answer showed in force (quantities read as the client reads
// them), and every 429 of any request is kept with its key id, for the checks (checks/).
// Each replica talks to its own path prefix (`replicaUrl`), taken off before the request goes on,
// so every request is also kept with its replica and instant: a 429 of the cloud's limiter can be
// placed among the requests of its key's window (which replica sent what).
import { Agent, createServer, request, type IncomingHttpHeaders } from 'node:http';
import { once } from 'node:events';
import { SCALING_FIELDS, limitViolation, type ScalingValues } from '../../src/api/index.js';
import { cpuMillicores, memoryGb } from '../../src/api/quantity.js';

/** One request as it passed through (any operation). */
export interface SentRequest {
  /** Epoch ms the request reached the observer. */
  readonly at: number;
  /** The label of the replica that sent it (its path prefix), undefined without a prefix. */
  readonly replica: string | undefined;
  /** The API key id of its Basic auth. */
  readonly keyId: string | undefined;
  readonly method: string;
  /** As the cloud sees it: without the replica's prefix and the query. */
  readonly path: string;
  /** HTTP status, or 'reset' when the cloud dropped the connection; null while open. */
  status: number | 'reset' | null;
}

export interface SentPatch {
  /** Epoch ms the request reached the observer. */
  readonly at: number;
  /** The label of the replica that sent it, when it came with its prefix. */
  readonly replica?: string | undefined;
  readonly pipeId: string;
  /** The API key id of its Basic auth. */
  readonly keyId: string | undefined;
  /** The parsed body; `{}` for a read (an empty PATCH). */
  readonly body: Record<string, unknown>;
  readonly idempotencyKey: string | undefined;
  /** HTTP status, or 'reset' when the cloud dropped the connection. */
  status: number | 'reset' | null;
  /** Epoch ms its answer (or reset) was complete; null while open. */
  answeredAt: number | null;
  /** A 200's answer: the scaling it showed in force (numbers; a field the answer had as 0/null
   *  while a change settles is absent). */
  shown?: ScalingValues;
  /** A 200's platform requestId. */
  requestId?: string;
}

/** A 429 answered to any request (real or injected: cloud.stats().limited has the real count). */
export interface Limited {
  readonly at: number;
  readonly replica?: string | undefined;
  readonly keyId: string | undefined;
  readonly method: string;
  readonly path: string;
  /** Its X-RateLimit-Remaining (an injected 429 may show requests left; a real one never does). */
  readonly remaining: string | undefined;
}

export interface Observer {
  readonly url: string;
  readonly patches: SentPatch[];
  /** Every request, in the order they came. */
  readonly requests: SentRequest[];
  readonly limited: Limited[];
  /** One line per out-of-range (or non-numeric) value sent, e.g. "pipe ...: replicas must be between 1 and 10". */
  readonly violations: string[];
  /** Scaling PATCHes that reached a pipe while another one for the same pipe was still open. */
  readonly overlaps: () => number;
  close(): Promise<void>;
}

const SCALING_PATH = /\/pipes\/([^/]+)\/scaling$/;
const REPLICA_PREFIX = /^\/replica\/([^/]+)(\/.*)$/;

/** The API URL a replica is given: the observer's, with the replica's label as a path prefix. */
export function replicaUrl(observerUrl: string, label: string): string {
  return `${observerUrl.replace(/\/+$/, '')}/replica/${encodeURIComponent(label)}`;
}

/** A request's URL as it came (with a replica's prefix or not): the replica, and the URL to forward. */
export function splitReplica(url: string): { replica: string | undefined; url: string } {
  const m = REPLICA_PREFIX.exec(url);
  return m ? { replica: decodeURIComponent(m[1]!), url: m[2]! } : { replica: undefined, url };
}
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade'];

function forwardable(h: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(h).filter(([k]) => !HOP_BY_HOP.includes(k)));
}

/** The key id of a Basic Authorization header. */
export function keyIdOf(header: string | undefined): string | undefined {
  const token = header ? /^Basic +(\S+)$/i.exec(header.trim())?.[1] : undefined;
  if (token === undefined) return undefined;
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 ? decoded.slice(0, colon) : undefined;
}

/** The scaling a scaling answer's body shows, as numbers (quantity strings read as the client
 *  reads them); a 0 or null a settling change shows is left out (nothing is in force there). */
export function shownScaling(text: string): { shown: ScalingValues; requestId?: string } | null {
  let body: { requestId?: unknown; result?: { scaling?: Record<string, unknown> } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return null;
  }
  const raw = body.result?.scaling;
  if (!raw || typeof raw !== 'object') return null;
  const shown: ScalingValues = {};
  for (const f of SCALING_FIELDS) {
    const v = raw[f];
    const n =
      f === 'replicaCpuMillicores'
        ? cpuMillicores(v)
        : f === 'replicaMemoryGb'
          ? memoryGb(v)
          : typeof v === 'number'
            ? v
            : null;
    if (n !== null && !(n === 0 && f !== 'concurrency')) shown[f] = n;
  }
  return { shown, ...(typeof body.requestId === 'string' ? { requestId: body.requestId } : {}) };
}

export async function startObserver(target: string): Promise<Observer> {
  const up = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const patches: SentPatch[] = [];
  const requests: SentRequest[] = [];
  const limited: Limited[] = [];
  const violations: string[] = [];
  const open = new Map<string, number>();
  let overlaps = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const { replica, url } = splitReplica(req.url ?? '/');
      const path = url.split('?')[0]!;
      const sent: SentRequest = {
        at: Date.now(),
        replica,
        keyId: keyIdOf(req.headers.authorization),
        method: req.method ?? '',
        path,
        status: null,
      };
      requests.push(sent);
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
          at: sent.at,
          replica,
          pipeId: m[1]!.toLowerCase(),
          keyId: sent.keyId,
          body,
          idempotencyKey: Array.isArray(key) ? key[0] : key,
          status: null,
          answeredAt: null,
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
          path: url,
          agent,
          headers: { ...forwardable(req.headers), 'content-length': String(raw.length) },
        },
        (ures) => {
          const status = ures.statusCode ?? null;
          sent.status = status;
          if (record) record.status = status;
          if (status === 429) {
            const remaining = ures.headers['x-ratelimit-remaining'];
            limited.push({
              at: Date.now(),
              replica,
              keyId: sent.keyId,
              method: req.method ?? '',
              path,
              remaining: Array.isArray(remaining) ? remaining[0] : remaining,
            });
          }
          res.writeHead(status ?? 502, forwardable(ures.headers));
          const answer: Buffer[] = [];
          if (record && status === 200) ures.on('data', (c: Buffer) => answer.push(c));
          ures.on('end', () => {
            if (!record) return;
            record.answeredAt = Date.now();
            if (status !== 200) return;
            const seen = shownScaling(Buffer.concat(answer).toString());
            if (seen) {
              record.shown = seen.shown;
              if (seen.requestId !== undefined) record.requestId = seen.requestId;
            }
          });
          ures.pipe(res);
        },
      );
      upstream.on('error', () => {
        sent.status = 'reset';
        if (record) {
          record.status = 'reset';
          record.answeredAt = Date.now();
        }
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
    requests,
    limited,
    violations,
    overlaps: () => overlaps,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      agent.destroy();
    },
  };
}
