// The shipped example (config/pipescaler.yaml over config/cloud.yaml) copied to N pipes: pipe i
// is a copy of example pipe i mod 9 (same service, kind, state, scaling and policy) with a
// generated name and id, added to the fixtures the embedded cloud serves.
import { fileURLToPath } from 'node:url';
import { loadFixtures, seqUuid, type ParsedFixtures } from '../src/cloud/index.js';
import { loadConfig } from '../src/config/index.js';
import type { PipeConfig } from '../src/policy/types.js';
import type { Config } from '../src/config/types.js';

const CONFIG = fileURLToPath(new URL('../config/pipescaler.yaml', import.meta.url));
const COPY_BASE = 0xd3000000;

export interface ExampleCopies {
  readonly example: Config;
  readonly config: Config;
  readonly fixtures: ParsedFixtures;
  readonly pipes: readonly PipeConfig[];
}

export function exampleCopies(n: number): ExampleCopies {
  const example = loadConfig(CONFIG, { ...process.env, PIPESCALER_API_URL: 'embedded' });
  const fixtures = structuredClone(loadFixtures(example.api.fixtures));
  const pipes: PipeConfig[] = [];
  for (let i = 0; i < n; i++) {
    const model = example.pipes[i % example.pipes.length]!;
    const service = fixtures.organizations
      .flatMap((g) => g.services)
      .find((s) => s.id.toLowerCase() === model.serviceId)!;
    const original = service.pipes.find((p) => p.id.toLowerCase() === model.pipeId)!;
    const pipeId = seqUuid(COPY_BASE, i + 1);
    service.pipes.push({ ...structuredClone(original), id: pipeId, name: `${original.name}-copy-${i + 1}` });
    pipes.push({ ...model, name: `${model.name}-${i + 1}`, pipeId });
  }
  return { example, config: { ...example, pipes }, fixtures, pipes };
}
