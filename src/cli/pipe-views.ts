// Where `plan` and `simulate` learn each pipe's kind, state, service state and current scaling (its
// PipeView). Embedded: from the cloud a running daemon scales (running-cloud.ts), else from the
// fixtures file the embedded cloud would start from. A URL: from the platform, with the same empty
// scaling PATCH the daemon uses (it changes nothing and answers the pipe) and the organization's
// services list the daemon reads before a change. A pipe that cannot be read gets a null view and a
// note saying why. The service's state goes into the view, so decide() skips a pipe of an idle or
// stopped service (`service_not_running`) in a plan as the daemon does.
import {
  ApiClient,
  SCALING_FIELDS,
  SERVICE_STATES_REFUSING_CHANGES,
  isApiError,
  pipeKind,
  type ScalingValues,
  type Service,
} from '../api/index.js';
import { safeUrl } from '../api/internal.js';
import { FixturesError, loadFixtures, type CloudState } from '../cloud/index.js';
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
import { readRunningCloud } from './running-cloud.js';

export interface PipeViewRead {
  readonly view: PipeView | null;
  /** Something plan should say about the pipe (why it is unknown, an idle service...). */
  readonly note?: string;
  /** Its service is idle or stopped: decide() skips it (the platform would answer 424 to a change). */
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
  serviceState: PipeView['serviceState'],
): PipeView {
  return {
    kind,
    state,
    applied,
    bounds: pipe.bounds,
    lastChange: {},
    recommendations: [],
    endpoints,
    ...(serviceState !== undefined ? { serviceState } : {}),
  };
}

/** The views of the config's pipes in what a cloud holds: its fixtures, or a running one's state. */
export function viewsFromFixtures(config: Config, fixtures: CloudState, file: string): PipeViews {
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
    const read = view(pipe, pipeKind(found.source), found.state, appliedOf(found.scaling), endpoints, service.state);
    out[pipe.name] = { view: read, ...idleNote(service) };
  }
  return out;
}

/** An empty PATCH still reads the pipe of an idle or stopped service; a change is what it refuses. */
function idleNote(service: { name: string; state?: string | undefined } | undefined): {
  note?: string;
  refused?: boolean;
} {
  if (service?.state === undefined || !SERVICE_STATES_REFUSING_CHANGES.has(service.state as never)) return {};
  return {
    refused: true,
    note: `service ${service.name} is ${service.state}: not scaled until it runs (a change would be answered 424)`,
  };
}

export interface ReadOptions {
  /** Read nothing: every pipe is assumed from its declared or implied kind. */
  readonly offline?: boolean;
  /** Where to say, before reading from the platform, what a read costs (default stderr). */
  readonly say?: (line: string) => void;
  /** Gets the one line saying what was read ("read: ..."), for the command to print. */
  readonly read?: (line: string) => void;
  /** The config file, to find the Redis of a running daemon (its environment overrides). */
  readonly file?: string;
  /** On embedded, read the cloud a running daemon scales (default true; diff reads the fixtures). */
  readonly running?: boolean;
}

export async function readPipeViews(config: Config, opts: ReadOptions = {}): Promise<PipeViews> {
  const readLine = opts.read ?? (() => undefined);
  if (opts.offline) {
    readLine('read: nothing (--offline): each pipe assumed from its declared or implied kind');
    return withAssumed(
      config,
      Object.fromEntries(config.pipes.map((p) => [p.name, { view: null, note: '--offline' }])),
    );
  }
  if (config.api.baseUrl === 'embedded') {
    let why = 'diff starts both configs from them, whatever a running daemon changed since';
    if (opts.running ?? true) {
      const running = await readRunningCloud(config, opts.file ?? 'the config');
      if ('state' in running) {
        const where = `the embedded cloud at ${running.url}`;
        readLine(`read: ${where} (the running daemon's)`);
        return withAssumed(config, viewsFromFixtures(config, running.state, where));
      }
      why = running.none;
    }
    readLine(`read: fixtures ${config.api.fixtures} (${why})`);
    try {
      return withAssumed(config, viewsFromFixtures(config, loadFixtures(config.api.fixtures), config.api.fixtures));
    } catch (err) {
      if (err instanceof FixturesError) throw new UserError(err.message);
      throw err;
    }
  }
  readLine(`read: the platform at ${safeUrl(config.api.baseUrl)}`);
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
  // per organization, its services by id (one list each, as the daemon reads it); null: not listed
  const services = new Map<string, Map<string, Service> | null>();
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
      if (!services.has(pipe.organizationId)) services.set(pipe.organizationId, await listServices(client, pipe));
      out[pipe.name] = await readOne(client, pipe, services.get(pipe.organizationId)?.get(pipe.serviceId));
    }
  } finally {
    await Promise.all([...clients.values()].map((c) => c.close()));
  }
  return out;
}

/** The organization's services by (lower-case) id; null when they cannot be listed (a key that may
 *  not list services): then the pipe's change goes ahead and the platform judges it, as in the daemon. */
async function listServices(client: ApiClient, pipe: PipeConfig): Promise<Map<string, Service> | null> {
  try {
    const { result } = await client.listServices(pipe.organizationId);
    return new Map(result.map((s) => [s.id.toLowerCase(), s]));
  } catch (err) {
    if (!isApiError(err)) throw err;
    return null;
  }
}

async function readOne(client: ApiClient, pipe: PipeConfig, service: Service | undefined): Promise<PipeViewRead> {
  const ref = { organizationId: pipe.organizationId, serviceId: pipe.serviceId };
  try {
    const { result } = await client.scalePipe({ ...ref, pipeId: pipe.pipeId }, {});
    const endpoints: Record<string, PipeView['endpoints'][string]> = {};
    for (const id of result.source.kafka?.reversePrivateEndpointIds ?? []) {
      const { result: endpoint } = await client.getReversePrivateEndpoint({ ...ref, reversePrivateEndpointId: id });
      endpoints[id] = endpoint.status;
    }
    return {
      view: view(pipe, pipeKind(result.source), result.state, appliedOf(result.scaling), endpoints, service?.state),
      ...idleNote(service),
    };
  } catch (err) {
    if (!isApiError(err)) throw err;
    return { view: null, note: `cannot read the pipe: ${err.code}: ${apiErrorText(err)}`, unreadable: err.code };
  }
}
