// Large fixtures built in code, for the benchmark and load tests: N organizations, each with a
// key (or several) and services holding stream and object-storage pipes.
import type { z } from 'zod';
import type { FixturePipe, Fixtures } from './fixtures-schema.js';

export interface GenerateOptions {
  /** Default 1. */
  organizations?: number;
  /** API keys per organization, default 1. */
  keysPerOrganization?: number;
  /** Services per organization, default 1; pipes are spread over them. */
  servicesPerOrganization?: number;
  /** Stream (kafka) pipes per organization, default 100. */
  streamPipes?: number;
  /** Object-storage pipes per organization, default 0. */
  objectStoragePipes?: number;
  /** Fixtures-level settings passed through (e.g. rateLimit: false for a benchmark). */
  rateLimit?: Fixtures['rateLimit'];
}

/** A uuid with a readable, deterministic layout: `<prefix 8 hex>-0000-4000-8000-<n 12 hex>`. */
export const seqUuid = (prefix: number, n: number): string =>
  `${prefix.toString(16).padStart(8, '0')}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

const ORG = 0xc0000000;
const SERVICE = 0xc1000000;
const PIPE = 0xc2000000;

/**
 * The ids of the n-th stream pipe (from 1) of fixtures generated with one organization and one
 * service (the defaults): what a config names it by.
 */
export function generatedPipeIds(n: number): { organizationId: string; serviceId: string; pipeId: string } {
  return { organizationId: seqUuid(ORG, 1), serviceId: seqUuid(SERVICE, 1), pipeId: seqUuid(PIPE, n) };
}

export function generateFixtures(o: GenerateOptions = {}): Fixtures {
  const orgs = o.organizations ?? 1;
  const keys = o.keysPerOrganization ?? 1;
  const perOrgServices = o.servicesPerOrganization ?? 1;
  const streams = o.streamPipes ?? 100;
  const objects = o.objectStoragePipes ?? 0;
  const organizations: NonNullable<Fixtures['organizations']> = [];
  const fixtures: Fixtures = { apiKeys: [], organizations };
  if (o.rateLimit !== undefined) fixtures.rateLimit = o.rateLimit;
  let pipeN = 0;
  for (let g = 0; g < orgs; g++) {
    const orgId = seqUuid(ORG, g + 1);
    for (let k = 0; k < keys; k++) {
      fixtures.apiKeys.push({
        keyId: `bench-key-${g + 1}-${k + 1}`,
        keySecret: `bench-secret-${g + 1}-${k + 1}`,
        organizationId: orgId,
      });
    }
    const services = Array.from({ length: perOrgServices }, (_, s) => ({
      id: seqUuid(SERVICE, g * perOrgServices + s + 1),
      name: `service-${g + 1}-${s + 1}`,
      state: 'running' as const,
      tags: [{ key: 'Environment', value: 'Bench' }],
      pipes: [] as z.input<typeof FixturePipe>[],
    }));
    for (let i = 0; i < streams + objects; i++) {
      pipeN += 1;
      const stream = i < streams;
      const service = services[i % perOrgServices];
      if (!service) throw new Error('generateFixtures: servicesPerOrganization must be at least 1');
      service.pipes.push({
        id: seqUuid(PIPE, pipeN),
        name: `${stream ? 'stream' : 'objects'}-${pipeN}`,
        state: 'Running',
        scaling: stream ? { replicas: 1, replicaCpuMillicores: 250, replicaMemoryGb: 1 } : { concurrency: 1 },
        source: stream
          ? { kafka: { type: 'kafka', brokers: 'broker:9092', topics: `topic-${pipeN}`, consumerGroup: `cg-${pipeN}` } }
          : {
              objectStorage: {
                type: 's3',
                url: `https://bucket.s3.amazonaws.com/p${pipeN}/*.json`,
                isContinuous: true,
              },
            },
        destination: { database: 'default', table: `t_${pipeN}` },
      });
    }
    organizations.push({ id: orgId, name: `org-${g + 1}`, services });
  }
  return fixtures;
}
