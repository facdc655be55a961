// Where `plan` and `simulate` learn each pipe's kind, state and current scaling (its PipeView).
// Embedded: from the fixtures file the embedded cloud would serve. A URL: from the platform, with
// the same empty scaling PATCH the daemon uses (it changes nothing and answers the pipe).
// A pipe that cannot be read gets a null view and a note saying why.
import {
  ApiClient,
  SCALING_FIELDS,
  SERVICE_STATES_REFUSING_CHANGES,
  isApiError,
  pipeKind,
  type ScalingValues,
} from '../api/index.js';
import { safeUrl } from '../api/internal.js';
import { FixturesError, loadFixtures, type ParsedFixtures } from '../cloud/index.js';
import {
  assumedKind,
  assumedView,
  describeAssumed,
  count,
  keyOf,
  policyOf,
  type PipeConfig,
  type PipeView,
} from '../policy/index.js';
import type { Config } from '../config/index.js';
import { sayRateLimitWaits } from './api-connection.js';
import { apiErrorText, UserError } from './run-cli.js';

export interface PipeViewRead {
  readonly view: PipeView | null;
  /** Something plan should say about the pipe (why it is unknown, an idle service...). */
  readonly note?: string;
  /** The platform reads the pipe but refuses any change (424: its service is idle or stopped). */
  readonly refused?: boolean;
  /** Why the pipe could not be read (an API error code, or not in the fixtures): plan exits 2. */
  readonly unreadable?: string;
  /** Not read: the view is the policy's baseline for the pipe's declared or implied kind. */
  readonly assumed?: boolean;
}
export type PipeViews = Record<string, PipeViewRead>;

export function appliedOf(scaling: Readonly<Record<string, unknown>>): ScalingValues {
  const out: ScalingValues = {};
  for (const f of SCALING_FIELDS) {
    const v = scaling[f];
    if (typeof v === 'number') out[f] = v;
  }
  return out;
}

function view(
  pipe: PipeConfig,
  kind: PipeView['kind'],
  state: PipeView['state'],
  applied: ScalingValues,
  endpoints: PipeView['endpoints'],
): PipeView {
  return { kind, state, applied, bounds: pipe.bounds, lastChange: {}, recommendations: [], endpoints };
}

export function viewsFromFixtures(config: Config, fixtures: ParsedFixtures, file: string): PipeViews {
  const out: PipeViews = {};
  for (const pipe of config.pipes) {
    const org = fixtures.organizations.find((o) => o.id.toLowerCase() === pipe.organizationId);
    const service = org?.services.find((s) => s.id.toLowerCase() === pipe.serviceId);
    const found = service?.pipes.find((p) => p.id.toLowerCase() === pipe.pipeId);
    if (!org || !service || !found) {
      const what = !org ? 'organization' : !service ? 'service' : 'pipe';
      out[pipe.name] = {
        view: null,
        note: `${what} not found in ${file} (the API would answer 404)`,
        unreadable: `${what} not in the fixtures`,
      };
      continue;
    }
    const endpoints: Record<string, PipeView['endpoints'][string]> = {};
    for (const id of found.source.kafka?.reversePrivateEndpointIds ?? []) {
      endpoints[id] = service.reversePrivateEndpoints.find((e) => e.id === id)?.status ?? 'Unknown';
    }
    const read = view(pipe, pipeKind(found.source), found.state, appliedOf(found.scaling), endpoints);
    // an empty PATCH still reads the pipe; a change is what an idle or stopped service refuses
    out[pipe.name] = SERVICE_STATES_REFUSING_CHANGES.has(service.state)
      ? {
          view: read,
          refused: true,
          note: `service ${service.name} is ${service.state}: the platform answers 424 to a change`,
        }
      : { view: read };
  }
  return out;
}

export interface ReadOptions {
  /** Read nothing: every pipe is assumed from its declared or implied kind. */
  readonly offline?: boolean;
  /** Where to say, before reading from the platform, what a read costs (default stderr). */
  readonly say?: (line: string) => void;
}

export async function readPipeViews(config: Config, opts: ReadOptions = {}): Promise<PipeViews> {
  if (opts.offline)
    return withAssumed(
      config,
      Object.fromEntries(config.pipes.map((p) => [p.name, { view: null, note: '--offline' }])),
    );
  if (config.api.baseUrl === 'embedded') {
    try {
      return withAssumed(config, viewsFromFixtures(config, loadFixtures(config.api.fixtures), config.api.fixtures));
    } catch (err) {
      if (err instanceof FixturesError) throw new UserError(err.message);
      throw err;
    }
  }
  const n = config.pipes.length;
  (opts.say ?? ((line) => process.stderr.write(`${line}\n`)))(
    `reading ${count(n, 'pipe')} from ${safeUrl(config.api.baseUrl)}: each read is an empty scaling PATCH (the platform has no GET ` +
      "for a pipe; it changes nothing and counts against the key's rate limit); --offline reads nothing",
  );
  return withAssumed(config, await viewsFromApi(config));
}

/** Pipes that could not be read, started from their policy's baseline when their kind is known. */
function withAssumed(config: Config, views: PipeViews): PipeViews {
  const out: PipeViews = { ...views };
  for (const pipe of config.pipes) {
    const read = views[pipe.name];
    if (read?.view) continue;
    const policy = policyOf(config, pipe);
    const kind = assumedKind(pipe, policy);
    if (kind === null) continue;
    const why = read?.note ? ` (${read.note})` : '';
    out[pipe.name] = {
      view: assumedView(pipe, policy, kind.kind),
      assumed: true,
      note: `${describeAssumed(kind)}${why}`,
      ...(read?.unreadable !== undefined ? { unreadable: read.unreadable } : {}),
    };
  }
  return out;
}

/** One empty scaling PATCH per pipe (and a GET per reverse private endpoint), one client per key. */
async function viewsFromApi(config: Config): Promise<PipeViews> {
  const clients = new Map<string, ApiClient>();
  const out: PipeViews = {};
  try {
    for (const pipe of config.pipes) {
      const key = keyOf(config, pipe);
      let client = clients.get(pipe.key);
      if (client === undefined) {
        client = new ApiClient({
          baseUrl: config.api.baseUrl,
          keyId: key.keyId,
          keySecret: key.keySecret,
          timeoutMs: config.api.timeoutMs,
          maxResponseBytes: config.api.maxResponseBytes,
        });
        sayRateLimitWaits(client);
        clients.set(pipe.key, client);
      }
      out[pipe.name] = await readOne(client, pipe);
    }
  } finally {
    await Promise.all([...clients.values()].map((c) => c.close()));
  }
  return out;
}

async function readOne(client: ApiClient, pipe: PipeConfig): Promise<PipeViewRead> {
  const ref = { organizationId: pipe.organizationId, serviceId: pipe.serviceId };
  try {
    const { result } = await client.scalePipe({ ...ref, pipeId: pipe.pipeId }, {});
    const endpoints: Record<string, PipeView['endpoints'][string]> = {};
    for (const id of result.source.kafka?.reversePrivateEndpointIds ?? []) {
      const { result: endpoint } = await client.getReversePrivateEndpoint({ ...ref, reversePrivateEndpointId: id });
      endpoints[id] = endpoint.status;
    }
    return { view: view(pipe, pipeKind(result.source), result.state, appliedOf(result.scaling), endpoints) };
  } catch (err) {
    if (!isApiError(err)) throw err;
    return { view: null, note: `cannot read the pipe: ${err.code}: ${apiErrorText(err)}`, unreadable: err.code };
  }
}
