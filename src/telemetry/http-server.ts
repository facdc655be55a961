// The telemetry endpoint: three fixed GET routes on node:http (no framework needed for that).
//   /metrics  prom-client's registry plus the appended exporters (BullMQ queues)
//   /healthz  200 while the process runs
//   /readyz   200 when every readiness check passes, else 503 naming the failed ones
// plus the read-only JSON routes the caller adds (/history). With credentials set, /metrics and
// the JSON routes answer 401 without them; /healthz and /readyz stay open for probes.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gauge, type Registry } from 'prom-client';
import { authorized, challenge, type TelemetryCredentials } from './http-auth.js';
import { mergeExpositions } from './exposition.js';
import { renderRegistry } from './fast-exposition.js';
import { READINESS_CHECKS, failedChecks, type ReadinessReport } from './readiness.js';
import { sharedRender, type Rendered } from './shared-render.js';

export interface TelemetryServerOptions {
  /** "host:port" ("127.0.0.1:9464", "0.0.0.0:9464", "[::1]:9464"); port 0 picks a free one. */
  readonly listen: string;
  readonly registry: Registry;
  readonly readiness: () => ReadinessReport | Promise<ReadinessReport>;
  /** More exposition text appended to the registry's (queueMetrics(...) for BullMQ). */
  readonly extraMetrics?: () => Promise<string>;
  /** A scrape does not wait longer than this for extraMetrics (Redis may be down); default 2000. */
  readonly extraMetricsTimeoutMs?: number;
  /** More read-only JSON routes by path (/history, src/history/http-route.ts). */
  readonly routes?: Readonly<Record<string, JsonRoute>>;
  /** The credentials /metrics and the JSON routes ask for, asked at each request (a reload may
   *  rotate them); undefined: open. */
  readonly auth?: () => TelemetryCredentials | undefined;
  /** A scrape that comes within this long of the end of the last render is answered with it
   *  (default 1000 ms; 0: only scrapes that come while a render is under way share it). */
  readonly reuseMs?: number;
  /** Epoch ms, for the reuse above (default Date.now). */
  readonly now?: () => number;
}

/** A GET route answering JSON from its query string. */
export type JsonRoute = (query: URLSearchParams) => Promise<{ status: number; body: unknown }>;

export interface TelemetryServer {
  /** Base URL, e.g. http://127.0.0.1:9464 */
  readonly url: string;
  close(): Promise<void>;
}

export const DEFAULT_LISTEN = '127.0.0.1:9464';

/** Registered on the caller's registry while the server runs, removed by close(). */
const OWN_METRICS = ['pipescaler_ready', 'pipescaler_ready_check', 'pipescaler_extra_metrics_up'] as const;

export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(listen.trim());
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || port > 65535) {
    throw new Error(`telemetry.listen: "${listen}" is not host:port (e.g. 127.0.0.1:9464)`);
  }
  const host = m[1] ?? m[2];
  return { host: host === undefined || host === '' ? '127.0.0.1' : host, port };
}

/** A listen that failed, naming the setting (a port clash said only "EADDRINUSE" with a stack). */
function listenError(listen: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  const fix = 'set telemetry.listen (or PIPESCALER_TELEMETRY_LISTEN) to a free host:port';
  if (code === 'EADDRINUSE')
    return new Error(
      `telemetry.listen: ${listen} is already in use (another pipescaler, or another program, listens there): ${fix}`,
    );
  if (code === 'EACCES')
    return new Error(
      `telemetry.listen: ${listen}: not allowed to listen there (a port below 1024 needs privileges): ${fix}`,
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return new Error(`telemetry.listen: ${listen}: no such address on this machine: ${fix}`);
  return new Error(`telemetry.listen: ${listen}: cannot listen (${code ?? (err as Error).message})`);
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Above this, a body is written a slice at a time, each once the socket took the last. */
const CHUNK_BYTES = 64 * 1024;

/**
 * A large body in slices of the one shared Buffer (no copies), waiting for the socket to drain
 * between them: 200 scrapes answered at once with res.end(4 MB) copied most of 800 MB into the
 * kernel in one turn of the event loop and held it for 1.1 s.
 */
async function writeInChunks(res: ServerResponse, body: Buffer): Promise<void> {
  for (let at = 0; at < body.length; at += CHUNK_BYTES) {
    if (res.destroyed) return;
    const more = res.write(body.subarray(at, at + CHUNK_BYTES));
    if (!more && at + CHUNK_BYTES < body.length)
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      });
  }
  res.end();
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}

const json = (res: ServerResponse, status: number, body: unknown): void =>
  send(res, status, 'application/json; charset=utf-8', `${JSON.stringify(body)}\n`);

export async function startTelemetry(options: TelemetryServerOptions): Promise<TelemetryServer> {
  const { registry } = options;
  const { host, port } = parseListen(options.listen);
  const extraTimeoutMs = options.extraMetricsTimeoutMs ?? 2000;

  const checkReadiness = async (): Promise<ReadinessReport | null> => {
    try {
      return await options.readiness();
    } catch {
      return null; // a throwing check is a failed one; its message stays out of the response
    }
  };

  const registers = [registry];
  new Gauge({
    name: OWN_METRICS[0],
    help: '1 when /readyz answers 200 (Redis ready, config loaded, API heard from within the reconcile interval)',
    registers,
    async collect() {
      const report = await checkReadiness();
      this.set(report !== null && failedChecks(report).length === 0 ? 1 : 0);
    },
  });
  new Gauge({
    name: OWN_METRICS[1],
    help: 'Each readiness check: 1 passing, 0 failing',
    labelNames: ['check'] as const,
    registers,
    async collect() {
      const report = await checkReadiness();
      for (const check of READINESS_CHECKS) this.set({ check }, report?.[check] === true ? 1 : 0);
    },
  });
  // Only with something appended: a constant 0 would read as a broken exporter.
  const extraUp =
    options.extraMetrics === undefined
      ? undefined
      : new Gauge({
          name: OWN_METRICS[2],
          help: 'Whether the appended exporters (BullMQ queue metrics) answered the last scrape in time (1) or not (0)',
          registers,
        });

  // One export at a time: while Redis is away its commands wait in ioredis' offline queue, and a
  // scrape every few seconds must not pile more of them up behind the first.
  let inflight: Promise<string> | undefined;
  const exportExtra = (extraMetrics: () => Promise<string>): Promise<string> =>
    (inflight ??= extraMetrics().finally(() => {
      inflight = undefined;
    }));

  const renderText = async (): Promise<string> => {
    let extra = '';
    if (options.extraMetrics !== undefined) {
      try {
        extra = mergeExpositions([await withTimeout(exportExtra(options.extraMetrics), extraTimeoutMs)]);
        extraUp?.set(1);
      } catch {
        extraUp?.set(0);
      }
    }
    const own = await renderRegistry(registry);
    return `${own}${own.endsWith('\n') || own === '' ? '' : '\n'}${extra}`;
  };
  // Every scrape that comes while a render is under way (or just after it) gets that render's
  // bytes: an audit's 60 concurrent scrapes of 2,000 pipes each rendered and encoded 3.9 MB of
  // their own, stalling the process for 11 s, and 200 took it to 1.86 GB.
  const render = sharedRender(renderText, {
    reuseMs: options.reuseMs ?? 1000,
    ...(options.now ? { now: options.now } : {}),
  });

  const metrics = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rendered: Rendered = await render(req.socket);
    const gzip = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
    const body = gzip ? await rendered.gzip() : rendered.body;
    res.writeHead(200, {
      'content-type': registry.contentType,
      'cache-control': 'no-store',
      'content-length': body.length,
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      vary: 'Accept-Encoding',
    });
    if (req.method === 'HEAD') res.end();
    else await writeInChunks(res, body);
  };

  /** False (and the 401 sent) when credentials are set and the request lacks them. */
  const allowed = (req: IncomingMessage, res: ServerResponse): boolean => {
    const auth = options.auth?.();
    if (auth === undefined || authorized(req.headers.authorization, auth)) return true;
    res.setHeader('www-authenticate', challenge(auth));
    json(res, 401, { error: 'unauthorized' });
    return false;
  };

  const readyz = async (res: ServerResponse): Promise<void> => {
    const report = await checkReadiness();
    if (report === null) {
      json(res, 503, { status: 'not ready', failed: ['readiness'] });
      return;
    }
    const failed = failedChecks(report);
    json(res, failed.length === 0 ? 200 : 503, {
      status: failed.length === 0 ? 'ready' : 'not ready',
      failed,
      checks: Object.fromEntries(READINESS_CHECKS.map((c) => [c, report[c] ? 'ok' : 'failed'])),
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const [path = '/', search = ''] = (req.url ?? '/').split('?', 2);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      json(res, 405, { error: 'method not allowed' });
      return;
    }
    if (path === '/metrics') {
      if (allowed(req, res)) await metrics(req, res);
      return;
    }
    if (path === '/healthz') {
      json(res, 200, { status: 'ok' });
      return;
    }
    if (path === '/readyz') return readyz(res);
    const route = options.routes?.[path];
    if (route) {
      if (!allowed(req, res)) return;
      const answer = await route(new URLSearchParams(search));
      json(res, answer.status, answer.body);
      return;
    }
    json(res, 404, {
      error: 'not found',
      routes: ['/metrics', '/healthz', '/readyz', ...Object.keys(options.routes ?? {})],
    });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) json(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  const removeOwn = (): void => {
    for (const name of OWN_METRICS) if (registry.getSingleMetric(name) !== undefined) registry.removeSingleMetric(name);
  };
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    removeOwn();
    throw listenError(options.listen, err);
  }
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${urlHost}:${address.port}`,
    close: async () => {
      removeOwn();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
