// Where `plan` and `simulate` learn each pipe's kind, state and current scaling (its PipeView).
// Embedded: from the fixtures file the embedded cloud would serve. A URL: from the platform, with
// the same empty scaling PATCH the daemon uses (it changes nothing and answers the pipe).
// A pipe that cannot be read gets a null view and a note saying why.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';
import {
  PipeScaling, PipeSource, PipeState, ReversePrivateEndpointStatus, SCALING_FIELDS, ServiceState, pipeKind,
  type ScalingValues,
} from '../api/index.js';
import type { Config, PipeConfig, PipeView } from '../policy/types.js';
import { UserError } from './run-cli.js';

export interface PipeViewRead {
  readonly view: PipeView | null;
  /** Something plan should say about the pipe (why it is unknown, an idle service...). */
  readonly note?: string;
}
export type PipeViews = Record<string, PipeViewRead>;

// The part of the fixtures a view needs; the embedded cloud validates the whole file itself.
const FixtureView = z.looseObject({
  organizations: z.array(z.looseObject({
    id: z.string(),
    services: z.array(z.looseObject({
      id: z.string(),
      name: z.string().optional(),
      state: ServiceState.default('running'),
      reversePrivateEndpoints: z.array(z.looseObject({ id: z.string(), status: ReversePrivateEndpointStatus })).default([]),
      pipes: z.array(z.looseObject({
        id: z.string(),
        state: PipeState.default('Running'),
        scaling: PipeScaling.default({ replicas: null, concurrency: null, replicaCpuMillicores: null, replicaMemoryGb: null }),
        source: PipeSource,
      })).default([]),
    })).default([]),
  })).default([]),
});
type FixtureView = z.output<typeof FixtureView>;

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

export function viewsFromFixtures(config: Config, fixtures: FixtureView, file: string): PipeViews {
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
    const endpoints: Record<string, z.output<typeof ReversePrivateEndpointStatus>> = {};
    for (const id of found.source.kafka?.reversePrivateEndpointIds ?? []) {
      endpoints[id] = service.reversePrivateEndpoints.find((e) => e.id === id)?.status ?? 'Unknown';
    }
    if (service.state !== 'running') {
      // the daemon reads a pipe with an empty scaling PATCH, which a stopped or idle service refuses
      out[pipe.name] = { view: null, note: `service ${service.name ?? service.id} is ${service.state}: the platform answers 424 to scaling` };
      continue;
    }
    out[pipe.name] = { view: view(pipe, pipeKind(found.source), found.state, appliedOf(found.scaling), endpoints) };
  }
  return out;
}

export async function readPipeViews(config: Config): Promise<PipeViews> {
  if (config.api.baseUrl === 'embedded') {
    let raw: unknown;
    try {
      raw = parse(readFileSync(config.api.fixtures, 'utf8'));
    } catch (err) {
      throw new UserError(`cannot read the fixtures ${config.api.fixtures}: ${(err as Error).message.split('\n')[0]}`);
    }
    const fixtures = FixtureView.safeParse(raw);
    if (!fixtures.success) throw new UserError(`${config.api.fixtures}: not a fixtures file (${z.prettifyError(fixtures.error).split('\n')[0]})`);
    return viewsFromFixtures(config, fixtures.data, config.api.fixtures);
  }
  throw new UserError('reading pipes from a platform URL needs the API client (not merged yet)');
}
