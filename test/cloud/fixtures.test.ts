import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { demoCredentials, generateFixtures, loadFixtures, parseFixtures, startCloud } from '../../src/cloud/index.js';
import { basic, call, DEMO, expectOk, FIXTURES_PATH, ORG, OTHER_ORG } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'pipescaler-fixtures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeYaml(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const HEAD = `apiKeys:
  - { keyId: k, keySecret: s, organizationId: 5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b }
organizations:
  - id: 5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b
    services:
      - id: a1000000-0000-4000-8000-000000000001
        name: svc
`;

describe('config/cloud.yaml (the demo organization)', () => {
  it('loads, with the demo ids the tests use (test/api/demo.ts)', () => {
    const f = loadFixtures(FIXTURES_PATH);
    expect(demoCredentials(f)).toEqual({
      keyId: 'pipescaler-demo-key',
      keySecret: 'demo-secret-change-me',
      organizationId: ORG,
    });
    expect(demoCredentials(f, OTHER_ORG).keyId).toBe('other-org-key');
    const demo = f.organizations[0]!;
    expect(demo.services.map((s) => [s.name, s.state])).toEqual([
      ['analytics-prod', 'running'],
      ['ingest-staging', 'running'],
      ['archive', 'idle'],
    ]);
    const pipes = demo.services.flatMap((s) => s.pipes.map((p) => [p.name, p.id, p.state]));
    expect(pipes).toHaveLength(10);
    expect(pipes).toContainEqual(['backfill-gcs', 'b1000000-0000-4000-8000-000000000006', 'Completed']);
    expect(demo.services[0]!.stack.dashboards[0]!.tiles).toHaveLength(2);
    expect(demo.services[0]!.stack.alerts).toHaveLength(1);
  });

  it('demoCredentials says when no key fits', () => {
    expect(() => demoCredentials(DEMO, 'f0000000-0000-4000-8000-000000000000')).toThrow(/no API key/);
  });
});

describe('fixtures errors name the field and the line', () => {
  it.each([
    [
      'a scaling out of range',
      `${HEAD}        pipes:
          - id: b1000000-0000-4000-8000-000000000001
            name: p
            scaling: { replicas: 20 }
            source: { kafka: { brokers: b } }
`,
      /bad\.yaml:11:34: organizations\[0\]\.services\[0\]\.pipes\[0\]\.scaling\.replicas: replicas must be between 1 and 10/,
    ],
    [
      'an unknown member',
      `${HEAD}        colour: red
`,
      /:8:9: organizations\[0\]\.services\[0\]: unknown member colour/,
    ],
    [
      'a bad enum',
      `${HEAD}        state: sleeping
`,
      /:8:16: organizations\[0\]\.services\[0\]\.state: must be one of starting, /,
    ],
    [
      'a pipe with two sources',
      `${HEAD}        pipes:
          - id: b1000000-0000-4000-8000-000000000001
            name: p
            source: { kafka: {}, kinesis: {} }
`,
      /:11:21: .*pipes\[0\]\.source: must have exactly one of kafka/,
    ],
    [
      'a missing required field',
      `${HEAD}        pipes:
          - id: b1000000-0000-4000-8000-000000000001
            source: { kafka: {} }
`,
      /:9:13: .*pipes\[0\]\.name: is required/,
    ],
    [
      'a duplicate pipe id',
      `${HEAD}        pipes:
          - { id: b1000000-0000-4000-8000-000000000001, name: a, source: { kafka: {} } }
          - { id: b1000000-0000-4000-8000-000000000001, name: b, source: { kafka: {} } }
`,
      /:10:19: .*pipes\[1\]\.id: duplicate pipe id/,
    ],
    [
      'an alert on a missing tile',
      `${HEAD}        stack:
          dashboards:
            - { id: 0d0000000000000000000001, name: d, tiles: [{ id: t1, name: t, x: 0, y: 0, w: 1, h: 1, config: {} }] }
          alerts:
            - id: "0e0000000000000000000001"
              dashboardId: 0d0000000000000000000001
              tileId: t2
              interval: 5m
              threshold: 1
              thresholdType: above
              channel: { type: webhook, webhookId: w }
`,
      /:14:23: .*alerts\[0\]\.tileId: unknown tile t2/,
    ],
    [
      'a malformed organization id',
      `apiKeys: [{ keyId: k, keySecret: s, organizationId: nope }]
`,
      /:1:53: apiKeys\[0\]\.organizationId: /,
    ],
    ['a YAML syntax error', 'apiKeys: [\n  - oops: {\n', /bad\.yaml:\d+:\d+: /],
  ])('%s', (_name, text, expected) => {
    const p = writeYaml('bad.yaml', text);
    expect(() => loadFixtures(p)).toThrow(expected);
    try {
      loadFixtures(p);
    } catch (err) {
      expect((err as { code?: string }).code).toBe('CONFIG_INVALID');
    }
  });

  it('a missing file is a clear error', () => {
    expect(() => loadFixtures(join(dir, 'none.yaml'))).toThrow(/none\.yaml: cannot read fixtures/);
  });

  it('fixtures given as an object are validated too', () => {
    expect(() => parseFixtures({ apiKeys: [] })).toThrow(/apiKeys: must have at least 1 items/);
  });
});

describe('generateFixtures (benchmark scale)', () => {
  it('builds thousands of pipes over several keys that a cloud serves quickly', async () => {
    const f = generateFixtures({
      organizations: 2,
      keysPerOrganization: 2,
      servicesPerOrganization: 4,
      streamPipes: 2500,
      objectStoragePipes: 500,
      rateLimit: false,
    });
    const parsed = parseFixtures(f);
    expect(parsed.apiKeys).toHaveLength(4);
    expect(parsed.organizations.flatMap((o) => o.services.flatMap((s) => s.pipes))).toHaveLength(6000);
    const cloud = await startCloud({ fixtures: f });
    try {
      expect(cloud.store.pipes.size).toBe(6000);
      const key = demoCredentials(f, parsed.organizations[1]!.id);
      const org = parsed.organizations[1]!;
      const svc = org.services[3]!;
      const pipe = svc.pipes[svc.pipes.length - 1]!;
      const a = await call(cloud, 'PATCH', `/v1/organizations/${org.id}/services/${svc.id}/pipes/${pipe.id}/scaling`, {
        auth: basic(key.keyId, key.keySecret),
        body: pipe.source.kafka ? { replicas: 3 } : { concurrency: 3 },
      });
      expectOk('scalePipe', a);
    } finally {
      await cloud.close();
    }
  });
});
