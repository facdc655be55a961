// Where `plan` and `simulate` learn each pipe's kind, state and current scaling (its PipeView).
// Embedded: from the fixtures file the embedded cloud would serve. A URL: from the platform, with
// the same empty scaling PATCH the daemon uses (it changes nothing and answers the pipe).
// A pipe that cannot be read gets a null view and a note saying why.
import { SCALING_FIELDS, pipeKind, type ScalingValues } from '../api/index.js';
import { FixturesError, loadFixtures, type ParsedFixtures } from '../cloud/index.js';
import type { Config, PipeConfig, PipeView } from '../policy/types.js';
import { UserError } from './run-cli.js';

export interface PipeViewRead {
  readonly view: PipeView | null;
  /** Something plan should say about the pipe (why it is unknown, an idle service...). */
  readonly note?: string;
  /** The platform reads the pipe but refuses any change (424: its service is idle or stopped). */
  readonly refused?: boolean;
}
export type PipeViews = Record<string, PipeViewRead>;

/** Service states in which the platform refuses scaling with 424 (platform-facts.md, the embedded cloud). */
const NOT_RUNNING: ReadonlySet<string> = new Set(['idle', 'stopped']);

export function appliedOf(scaling: Readonly<Record<string, unknown>>): ScalingValues {
  const out: ScalingValues = {};
  for (const f of SCALING_FIELDS) {
    const v = scaling[f];
    if (typeof v === 'number') out[f] = v;
  }
  return out;
}

function view(pipe: PipeConfig, kind: PipeView['kind'], state: PipeView['state'], applied: ScalingValues, endpoints: PipeView['endpoints']): PipeView {
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
      out[pipe.name] = { view: null, note: `${what} not found in ${file} (the API would answer 404)` };
      continue;
    }
    const endpoints: Record<string, PipeView['endpoints'][string]> = {};
    for (const id of found.source.kafka?.reversePrivateEndpointIds ?? []) {
      endpoints[id] = service.reversePrivateEndpoints.find((e) => e.id === id)?.status ?? 'Unknown';
    }
    const read = view(pipe, pipeKind(found.source), found.state, appliedOf(found.scaling), endpoints);
    // an empty PATCH still reads the pipe; a change is what an idle or stopped service refuses
    out[pipe.name] = NOT_RUNNING.has(service.state)
      ? { view: read, refused: true, note: `service ${service.name ?? service.id} is ${service.state}: the platform answers 424 to a change` }
      : { view: read };
  }
  return out;
}

export async function readPipeViews(config: Config): Promise<PipeViews> {
  if (config.api.baseUrl === 'embedded') {
    try {
      return viewsFromFixtures(config, loadFixtures(config.api.fixtures), config.api.fixtures);
    } catch (err) {
      if (err instanceof FixturesError) throw new UserError(err.message);
      throw err;
    }
  }
  throw new UserError('reading pipes from a platform URL needs the API client (not merged yet)');
}
