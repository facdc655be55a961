// Run-time control of the cloud, outside /v1: faults, rate limit, propagation, stats, and what it
// holds now (state). Needs the admin token.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isAdmin } from '../auth.js';
import { CloudHttpError, parseBody } from '../errors.js';
import { FaultConfig, type Propagation } from '../fixtures-schema.js';
import { readBody } from '../body.js';
import type { RateLimit } from '../rate-limit.js';
import type { CloudStats } from '../stats.js';
import type { CloudState } from '../snapshot.js';

export interface AdminControls {
  readonly token: string;
  faults(): FaultConfig;
  setFaults(f: FaultConfig): void;
  rateLimit(): RateLimit | false;
  setRateLimit(l: RateLimit | false): void;
  propagation(): Propagation;
  /** Validates (a 400 naming the field) and replaces. */
  setPropagation(p: unknown): void;
  stats(): CloudStats;
  resetStats(): void;
  /** What the cloud holds now (snapshot.ts): what `plan` reads of a running demo. */
  state(): CloudState;
}

const RateLimitBody = z.union([
  z.literal(false),
  z.strictObject({ requests: z.number().int().min(1), perMs: z.number().int().min(1) }),
]);

export function adminRoutes(controls: AdminControls) {
  return async (app: FastifyInstance): Promise<void> => {
    app.addHook('onRequest', async (req) => {
      if (!isAdmin(req.headers.authorization, controls.token))
        throw new CloudHttpError(401, 'Admin routes need Authorization: Bearer <admin token>');
    });
    const ok = (requestId: string, result: unknown) => ({ status: 200, requestId, result });
    app.get('/admin/faults', async (req) => ok(req.id, controls.faults()));
    app.put('/admin/faults', async (req) => {
      controls.setFaults(parseBody(FaultConfig, readBody(req)));
      return ok(req.id, controls.faults());
    });
    app.get('/admin/rate-limit', async (req) => ok(req.id, controls.rateLimit()));
    app.put('/admin/rate-limit', async (req) => {
      controls.setRateLimit(parseBody(RateLimitBody, readBody(req)));
      return ok(req.id, controls.rateLimit());
    });
    app.get('/admin/propagation', async (req) => ok(req.id, controls.propagation()));
    app.put('/admin/propagation', async (req) => {
      controls.setPropagation(readBody(req));
      return ok(req.id, controls.propagation());
    });
    app.get('/admin/stats', async (req) => ok(req.id, controls.stats()));
    app.get('/admin/state', async (req) => ok(req.id, controls.state()));
    app.delete('/admin/stats', async (req) => {
      controls.resetStats();
      return { status: 200, requestId: req.id };
    });
  };
}
