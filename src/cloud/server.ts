// The embedded cloud's HTTP server: fastify routes from the ENDPOINTS table, with the platform's
// checks in its order: route -> auth (401) -> rate limit (429) -> org access (403) -> path ids
// (400) -> existence (404) -> body (400) -> state (400/424).
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ENDPOINTS, isObjectId, isUuid, OPERATIONS, type Operation } from '../api/index.js';
import { REASONS, type PathParamOf, type SentResultOf } from '../api/internal.js';
import { KeyRing } from './auth.js';
import { BODY_LIMIT, installBodyParsers, readBody } from './body.js';
import { CloudHttpError } from './errors.js';
import { planFaults, type FaultPlan } from './faults.js';
import { holdUntilGone, type LateHolds } from './late.js';
import type { FaultConfig, Propagation, Quirks } from './fixtures-schema.js';
import type { FixedWindowLimiter } from './rate-limit.js';
import { adminRoutes, type AdminControls } from './routes/admin.js';
import type { RouteContext, RouteHandler } from './routes/context.js';
import { HANDLERS } from './routes/index.js';
import type { StatsCounter } from './stats.js';
import type { CloudStore } from './store.js';

export interface ServerParts {
  readonly store: CloudStore;
  readonly keys: KeyRing;
  readonly limiter: FixedWindowLimiter;
  readonly stats: StatsCounter;
  readonly quirks: Quirks;
  propagation(): Propagation;
  readonly now: () => number;
  readonly random: () => number;
  faults(): FaultConfig;
  readonly admin: AdminControls | null;
  /** Requests held by the `late` fault, until they are carried out. */
  readonly late: LateHolds;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    operation?: Operation;
  }
}

const NOT_FOUND_HTML =
  '<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n</body>\r\n</html>\r\n';

// Which path parameters are uuids and which 24-hex object ids (docs/platform-api.md#ids).
const OBJECT_ID_PARAMS = new Set(['dashboardId', 'alertId']);

const toFastifyPath = (template: string): string => template.replace(/\{(\w+)\}/g, ':$1');

function sendError(reply: FastifyReply, req: FastifyRequest, err: CloudHttpError): FastifyReply {
  return reply
    .code(err.status)
    .header('x-request-id', req.id)
    .send({ status: err.status, error: err.platformText, requestId: req.id });
}

function sendTooMany(reply: FastifyReply, headers: Record<string, string> | null): FastifyReply {
  if (headers) reply.headers(headers);
  return reply.code(429).send({ error: 'TOO_MANY_REQUESTS' });
}

/** The route of one operation: its handler, typed by the operation, answers in the success envelope. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- Op is what makes HANDLERS[op] this operation's handler
function addRoute<Op extends Operation>(
  v1: FastifyInstance,
  op: Op,
  parts: ServerParts,
  plans: WeakMap<FastifyRequest, FaultPlan>,
): void {
  const def = ENDPOINTS[op];
  const handler: RouteHandler<Op> = HANDLERS[op];
  v1.route({
    method: def.method,
    url: toFastifyPath(def.path),
    config: { operation: op },
    handler: async (req, reply) => {
      const plan = plans.get(req);
      const ctx: RouteContext<Op> = {
        // fastify fills exactly the names of the route's path, the names of def.path.
        params: req.params as Record<PathParamOf<Op>, string>,
        query: req.query as Record<string, string | string[] | undefined>,
        body: () => readBody(req),
        store: parts.store,
        now: parts.now,
        quirks: parts.quirks,
        propagation: parts.propagation(),
        stuck: plan?.stuck ?? false,
      };
      let result: SentResultOf<Op>;
      if (plan?.lateMaxMs != null) {
        // Carried out once the client has given up (or after maxMs, answered late): the change a
        // timed-out client counts as not made is made anyway.
        const held = await parts.late.run(holdUntilGone(req.raw.socket, plan.lateMaxMs), () => handler(ctx));
        if (held.gone) return reply.hijack();
        if (!held.ok) throw held.error;
        result = held.result;
      } else result = handler(ctx);
      reply.header('x-request-id', req.id);
      return def.method === 'DELETE' ? { status: 200, requestId: req.id } : { status: 200, requestId: req.id, result };
    },
  });
}

export function buildServer(parts: ServerParts): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT,
    genReqId: () => randomUUID(),
    forceCloseConnections: true,
    return503OnClosing: true,
  });
  installBodyParsers(app);
  const resets = new WeakSet<FastifyRequest>();
  const plans = new WeakMap<FastifyRequest, FaultPlan>();

  app.setErrorHandler((error: FastifyError | CloudHttpError, req, reply) => {
    if (error instanceof CloudHttpError) return sendError(reply, req, error);
    const status = typeof error.statusCode === 'number' && REASONS[error.statusCode] ? error.statusCode : 500;
    const text = status === 500 ? 'Internal error' : error.message;
    return sendError(reply, req, new CloudHttpError(status, text));
  });

  app.setNotFoundHandler((_req, reply) => {
    parts.stats.request('unrouted', 404);
    return reply.code(404).type('text/html').send(NOT_FOUND_HTML);
  });

  app.register(async (v1) => {
    v1.addHook('onRequest', async (req, reply) => {
      const op = req.routeOptions.config.operation;
      if (op === undefined) throw new Error('a v1 route without its operation (addRoute sets it)');
      const auth = parts.keys.authenticate(req.headers.authorization);
      if (!auth.ok) throw new CloudHttpError(401, auth.reason);
      const keyId = auth.key.keyId;
      const rate = parts.limiter.take(keyId);
      if (rate) {
        reply.headers(rate.headers);
        if (!rate.allowed) {
          parts.stats.limited({
            keyId,
            at: parts.now(),
            windowStart: rate.windowStart,
            method: req.method,
            path: req.url.split('?', 1)[0] ?? req.url,
            requestId: req.id,
          });
          return sendTooMany(reply, null);
        }
      }
      const plan = planFaults(parts.faults(), op, parts.random, (req.params as { pipeId?: string }).pipeId);
      if (plan.delayMs > 0) {
        parts.stats.fault('latency');
        await sleep(plan.delayMs);
      }
      if (plan.lateMaxMs !== null) parts.stats.fault('late');
      if (plan.stuck) parts.stats.fault('stuck');
      if (plan.lateMaxMs !== null || plan.stuck) plans.set(req, plan);
      if (plan.failure) {
        parts.stats.fault(plan.failure);
        if (plan.failure === 'reset') {
          resets.add(req);
          reply.hijack();
          req.raw.socket.destroy();
          return reply;
        }
        if (plan.failure === 'error429') return sendTooMany(reply, parts.limiter.peek(keyId));
        const status = plan.failure === 'error500' ? 500 : 503;
        throw new CloudHttpError(
          status,
          status === 500 ? 'Internal error (injected)' : 'Service unavailable (injected)',
        );
      }
      const params = req.params as Record<string, string>;
      const orgId = params.organizationId ?? ''; // every path has it; none fails as not a UUID
      if (!isUuid(orgId)) throw new CloudHttpError(400, `Invalid organizationId ${orgId}: must be a UUID`);
      if (orgId.toLowerCase() !== auth.key.organizationId.toLowerCase()) {
        throw new CloudHttpError(403, 'The API key does not belong to this organization');
      }
      for (const [name, value] of Object.entries(params)) {
        const ok = OBJECT_ID_PARAMS.has(name) ? isObjectId(value) : isUuid(value);
        if (!ok)
          throw new CloudHttpError(
            400,
            `Invalid ${name} ${value}: must be ${OBJECT_ID_PARAMS.has(name) ? 'a 24-hex object id' : 'a UUID'}`,
          );
      }
      return undefined;
    });

    v1.addHook('onResponse', async (req, reply) => {
      if (resets.has(req)) return;
      parts.stats.request(req.routeOptions.config.operation ?? 'unrouted', reply.statusCode);
    });

    for (const op of OPERATIONS) addRoute(v1, op, parts, plans);
  });

  if (parts.admin) app.register(adminRoutes(parts.admin));
  return app;
}
