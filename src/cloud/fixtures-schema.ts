// The fixtures file of the embedded cloud, in the API's own field names, validated with the
// schemas of src/api. Fields a reader does not care about (serviceId, timestamps, mappings...)
// get defaults so a fixtures file stays short.
import { z } from 'zod';
import {
  AlertInput,
  AlertState,
  DashboardInput,
  ObjectId,
  OPERATIONS,
  Pipe,
  PipeState,
  ReversePrivateEndpoint,
  ScalingRequest,
  Service,
  ServiceState,
  Source,
  Tag,
  Uuid,
} from '../api/index.js';
import { parseDuration } from '../policy/index.js';

const FIXTURE_EPOCH = '2026-01-01T00:00:00.000Z';

export const FixtureApiKey = z.strictObject({
  keyId: z.string().min(1),
  keySecret: z.string().min(1),
  organizationId: Uuid,
});

const DURATION = 'must be a duration like 500ms, 10s or 1m';

/** Milliseconds of a duration: a whole number of ms, or the config's syntax (policy/durations.ts):
 *  `500ms`, `10s`, `1m`. One transform after the type check, so a bad value gets this message. */
function toMs(v: number | string, min: number, ctx: z.RefinementCtx, what = DURATION): number {
  const ms = typeof v === 'number' ? (Number.isInteger(v) ? v : null) : parseDuration(v);
  if (ms !== null && ms >= min) return ms;
  ctx.addIssue({
    code: 'custom',
    message: typeof v === 'number' ? `must be a whole number of ms, at least ${min}` : what,
  });
  return z.NEVER;
}
const durationMs = (min: number) => z.union([z.number(), z.string()]).transform((v, ctx) => toMs(v, min, ctx));

/** How long a scaling change takes to take effect: a duration (0: at once), or `never` (stuck). */
export const PropagationDelay = z
  .union([z.number(), z.string()])
  .transform((v, ctx): number | 'never' => (v === 'never' ? v : toMs(v, 0, ctx, `${DURATION}, or never`)));
export type PropagationDelay = z.output<typeof PropagationDelay>;

// Strict at the level a person writes, so a misspelt member is an error, not silently served.
export const FixturePipe = z.strictObject({
  ...Pipe.shape,
  serviceId: Uuid.optional(),
  state: PipeState.default('Running'),
  /** This pipe's propagation delay (replaces its kind's); not part of the answered pipe. */
  propagation: PropagationDelay.optional(),
  // Stored scaling is the request shape (numbers within the ranges of section 8); the quirks
  // decide how it is answered.
  scaling: ScalingRequest.default({}),
  destination: Pipe.shape.destination.optional(),
  fieldMappings: Pipe.shape.fieldMappings.default([]),
  createdAt: z.string().default(FIXTURE_EPOCH),
  updatedAt: z.string().default(FIXTURE_EPOCH),
});

export const FixtureReversePrivateEndpoint = z.strictObject({
  ...ReversePrivateEndpoint.shape,
  serviceId: Uuid.optional(),
  description: ReversePrivateEndpoint.shape.description.default(''),
  dnsNames: z.array(z.string()).default([]),
  privateDnsNames: z.array(z.string()).default([]),
});

const stamps = { createdAt: z.string().default(FIXTURE_EPOCH), updatedAt: z.string().default(FIXTURE_EPOCH) };

export const FixtureDashboard = DashboardInput.safeExtend({ id: ObjectId, ...stamps });
export const FixtureAlert = AlertInput.safeExtend({ id: ObjectId, state: AlertState.default('OK'), ...stamps });

export const FixtureStack = z.strictObject({
  dashboards: z.array(FixtureDashboard).default([]),
  alerts: z.array(FixtureAlert).default([]),
  sources: z.array(Source).default([]),
});

export const FixtureService = z.strictObject({
  ...Service.shape,
  state: ServiceState.default('running'),
  tags: z.array(Tag).default([]),
  createdAt: z.iso.datetime({ offset: true }).default(FIXTURE_EPOCH),
  pipes: z.array(FixturePipe).default([]),
  reversePrivateEndpoints: z.array(FixtureReversePrivateEndpoint).default([]),
  stack: FixtureStack.default({ dashboards: [], alerts: [], sources: [] }),
});

export const FixtureOrganization = z.strictObject({
  id: Uuid,
  name: z.string().optional(),
  services: z.array(FixtureService).default([]),
});

/** `{requests: 10, per: 10s}`; `per` is a duration (`500ms`, `10s`, `1m`) or milliseconds. */
export const FixtureRateLimit = z.union([
  z.literal(false),
  z.strictObject({
    requests: z.number().int().min(1),
    per: durationMs(1),
  }),
]);

const probability = z.number().min(0).max(1);
export const FaultRule = z.strictObject({
  /** Only requests naming one of these pipes (by id) get the rule's faults; others none. */
  pipes: z.array(Uuid).optional(),
  error500: probability.optional(),
  error503: probability.optional(),
  error429: probability.optional(),
  /** Destroy the socket without an answer. */
  reset: probability.optional(),
  /** Hold the request until the client gives up (closes its connection), at most `maxMs`, then
   *  carry it out anyway: the change a timed-out client counts as not made is made. */
  late: z.strictObject({ probability, maxMs: z.number().int().min(1) }).optional(),
  /** The change is answered 200 as usual but never takes effect. */
  stuck: probability.optional(),
  latency: z
    .strictObject({
      probability,
      minMs: z.number().min(0),
      maxMs: z.number().min(0),
    })
    .refine((l) => l.maxMs >= l.minMs, { error: 'maxMs must be >= minMs', path: ['maxMs'] })
    .optional(),
});
export type FaultRule = z.infer<typeof FaultRule>;

/** Per operation name (a key of ENDPOINTS) or `default`; an operation's rule replaces the default. */
export const FaultConfig = z.partialRecord(z.enum(['default', ...OPERATIONS]), FaultRule);
export type FaultConfig = z.infer<typeof FaultConfig>;

export const Quirks = z.strictObject({
  /** Answer replicaCpuMillicores/replicaMemoryGb as "500m"/"2Gi". */
  quantityStrings: z.boolean().default(false),
  /** For this many ms after a change, answer 0 (cpu) and null (memory). */
  transientZeroMs: z.number().int().min(0).default(0),
});
export type Quirks = z.output<typeof Quirks>;

/**
 * When a scaling change takes effect: per pipe (`pipes`, or a pipe's own `propagation` member),
 * else per kind, else `default`. Until then reads show the old values (`reads: old`) or, as the
 * live API does right after a change, 0 CPU and null memory (`reads: transient`).
 */
export const Propagation = z.strictObject({
  default: PropagationDelay.default(0),
  stream: PropagationDelay.optional(),
  objectStorage: PropagationDelay.optional(),
  reads: z.enum(['old', 'transient']).default('old'),
  pipes: z.record(Uuid, PropagationDelay).default({}),
});
export type Propagation = z.output<typeof Propagation>;

export const FixturesSchema = z.strictObject({
  apiKeys: z.array(FixtureApiKey).min(1),
  organizations: z.array(FixtureOrganization).default([]),
  rateLimit: FixtureRateLimit.optional(),
  faults: FaultConfig.optional(),
  quirks: Quirks.optional(),
  propagation: Propagation.optional(),
});

/** The fixtures as a person writes them (defaults may be left out). */
export type Fixtures = z.input<typeof FixturesSchema>;
/** The fixtures after validation, every default filled. */
export type ParsedFixtures = z.output<typeof FixturesSchema>;
