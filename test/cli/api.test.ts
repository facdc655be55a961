// `pipescaler api ...` through the built bin (npm run build first) against an embedded cloud
// started in this test, one or more cases per command family.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/index.js';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import {
  CLOUD_FIXTURES,
  DEMO_KEY,
  demoAlert,
  demoDashboard,
  ENDPOINT_READY,
  ORG,
  PIPES,
  SERVICES,
  UNKNOWN_OBJECT_ID,
} from '../api/demo.js';

const BIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const SVC = SERVICES.analyticsProd;
const REQUEST_ID = /\(requestId [0-9a-f-]{36}\)/;

let cloud: EmbeddedCloud;
let dir: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], options: { env?: Record<string, string | undefined>; input?: string } = {}): Promise<Run> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries({
      PATH: process.env.PATH,
      PIPESCALER_API_URL: cloud.url,
      PIPESCALER_KEY_ID: DEMO_KEY.keyId,
      PIPESCALER_KEY_SECRET: DEMO_KEY.keySecret,
      ...options.env,
    }).filter(([, v]) => v !== undefined),
  );
  return new Promise((resolve, reject) => {
    // Async spawn: the cloud answering it lives in this process's event loop.
    const child = spawn(process.execPath, [BIN, 'api', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** An error exit: code 1, one line on stderr, no stack trace, nothing on stdout. */
function expectErrorExit(run: Run, pattern: RegExp): void {
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(pattern);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).not.toMatch(/\n\s+at /);
}

const lines = (s: string) => s.trim().split('\n');

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
  cloud = await startCloud({ fixtures: CLOUD_FIXTURES, port: 0, rateLimit: false });
  dir = mkdtempSync(join(tmpdir(), 'pipescaler-cli-api-'));
});
afterAll(async () => {
  await cloud.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('pipescaler api services', () => {
  it('lists the services as an aligned table', async () => {
    const run = await cli(['services', 'list', ORG]);
    expect(run.code).toBe(0);
    const [header, ...rows] = lines(run.stdout);
    expect(header).toMatch(/^ID\s+NAME\s+STATE\s+TAGS$/);
    expect(rows).toHaveLength(3);
    expect(header?.indexOf('NAME')).toBe(rows[0]?.indexOf(rows[0].split(/\s+/)[1] ?? ''));
  });

  it('applies several --filter flags together and prints --json', async () => {
    const run = await cli([
      'services',
      'list',
      ORG,
      '--filter',
      'tag:Environment=Production',
      '--filter',
      'tag:isActive',
      '--json',
    ]);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { name: string }[]).map((s) => s.name)).toEqual(['analytics-prod']);
  });

  it("shows the platform's 400 for a malformed filter", async () => {
    expectErrorExit(
      await cli(['services', 'list', ORG, '--filter', 'Environment=Production']),
      /^error: API_BAD_REQUEST: (?!BAD_REQUEST).+ \(requestId /,
    );
  });
});

describe('pipescaler api pipes', () => {
  it('scales a pipe and shows its scaling', async () => {
    const run = await cli([
      'pipes',
      'scale',
      ORG,
      SVC,
      PIPES.ordersEvents,
      '--replicas',
      '4',
      '--cpu',
      '1000',
      '--memory',
      '4',
    ]);
    expect(run.code).toBe(0);
    const [header, row] = lines(run.stdout);
    expect(header).toMatch(/^ID\s+NAME\s+STATE\s+KIND\s+REPLICAS\s+CPU_M\s+MEMORY_GB\s+CONCURRENCY$/);
    expect(row?.split(/\s+/)).toEqual([
      PIPES.ordersEvents,
      'orders-events',
      'Running',
      'stream',
      '4',
      '1000',
      '4',
      '-',
    ]);
  });

  it('exits 1 with the platform text and requestId for an out-of-range value, no stack trace', async () => {
    const run = await cli(['pipes', 'scale', ORG, SVC, PIPES.ordersEvents, '--replicas', '11']);
    expectErrorExit(run, /^error: API_BAD_REQUEST: replicas must be between 1 and 10 /);
    expect(run.stderr).toMatch(REQUEST_ID);
  });

  it('refuses a flag that is not a number, naming it', async () => {
    expectErrorExit(
      await cli(['pipes', 'scale', ORG, SVC, PIPES.ordersEvents, '--concurrency', 'lots']),
      /^error: --concurrency: "lots" is not a number\n$/,
    );
  });

  it('reads the secret from --key-secret-file', async () => {
    const file = join(dir, 'secret');
    writeFileSync(file, `${DEMO_KEY.keySecret}\n`);
    const run = await cli(
      ['pipes', 'scale', ORG, SVC, PIPES.nightlyS3, '--concurrency', '3', '--json', '--key-secret-file', file],
      {
        env: { PIPESCALER_KEY_SECRET: undefined },
      },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ id: PIPES.nightlyS3, scaling: { concurrency: 3 } });
  });

  it('says what is missing when there are no credentials', async () => {
    expectErrorExit(
      await cli(['pipes', 'scale', ORG, SVC, PIPES.ordersEvents], { env: { PIPESCALER_KEY_SECRET: undefined } }),
      /^error: no API key secret: set PIPESCALER_KEY_SECRET or pass --key-secret-file FILE\n$/,
    );
    expectErrorExit(
      await cli(['services', 'list', ORG], { env: { PIPESCALER_API_URL: undefined } }),
      /^error: no API URL/,
    );
    expectErrorExit(
      await cli(['services', 'list', ORG], { env: { PIPESCALER_KEY_ID: undefined } }),
      /^error: no API key id/,
    );
  });

  it('a wrong secret is a 401 whose message does not echo it', async () => {
    const run = await cli(['services', 'list', ORG], { env: { PIPESCALER_KEY_SECRET: 'MARKER-wrong-secret' } });
    expectErrorExit(run, /^error: API_UNAUTHORIZED: (?!UNAUTHORIZED)/);
    expect(run.stderr).not.toContain('MARKER');
  });
});

describe('pipescaler api endpoints', () => {
  it('shows a reverse private endpoint', async () => {
    const run = await cli(['endpoints', 'get', ORG, SVC, ENDPOINT_READY]);
    expect(run.code).toBe(0);
    expect(lines(run.stdout)[1]).toMatch(new RegExp(`^${ENDPOINT_READY}\\s+MSK_MULTI_VPC\\s+Ready\\s+SASL_IAM`));
  });
});

describe('pipescaler api dashboards and alerts', () => {
  it('create (--file), list, get, update (stdin) and delete a dashboard', { timeout: 60_000 }, async () => {
    const file = join(dir, 'dashboard.json');
    writeFileSync(file, JSON.stringify(demoDashboard('CLI board')));
    const created = await cli(['dashboards', 'create', ORG, SVC, '--file', file, '--json']);
    expect(created.code).toBe(0);
    const dashboardId = (JSON.parse(created.stdout) as { id: string }).id;

    const list = await cli(['dashboards', 'list', ORG, SVC]);
    expect(list.stdout).toMatch(new RegExp(`^${dashboardId}\\s+CLI board\\s+2\\s+pipes`, 'm'));
    expect((await cli(['dashboards', 'get', ORG, SVC, dashboardId])).stdout).toContain('CLI board');
    const updated = await cli(['dashboards', 'update', ORG, SVC, dashboardId], {
      input: JSON.stringify(demoDashboard('Renamed')),
    });
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain('Renamed');

    expect((await cli(['dashboards', 'delete', ORG, SVC, dashboardId])).stdout).toMatch(
      new RegExp(`^deleted dashboard ${dashboardId} \\(requestId `),
    );
    expectErrorExit(
      await cli(['dashboards', 'get', ORG, SVC, dashboardId]),
      /^error: API_NOT_FOUND: Unknown .+ \(requestId /,
    );
  });

  it('create (stdin), update (--file), list, get and delete an alert', { timeout: 60_000 }, async () => {
    const client = new ApiClient({ baseUrl: cloud.url, ...DEMO_KEY });
    const dashboardId = (await client.createDashboard({ organizationId: ORG, serviceId: SVC }, demoDashboard())).result
      .id;
    await client.close();

    const alert = await cli(['alerts', 'create', ORG, SVC, '--json'], {
      input: JSON.stringify(demoAlert(dashboardId)),
    });
    expect(alert.code).toBe(0);
    const alertId = (JSON.parse(alert.stdout) as { id: string }).id;
    const alertFile = join(dir, 'alert.json');
    writeFileSync(alertFile, JSON.stringify(demoAlert(dashboardId, 42)));
    expect((await cli(['alerts', 'update', ORG, SVC, alertId, '--file', alertFile])).stdout).toMatch(/above 42/);
    expect((await cli(['alerts', 'list', ORG, SVC])).stdout).toMatch(new RegExp(`^${alertId}\\s+Lag too high`, 'm'));
    expect((await cli(['alerts', 'get', ORG, SVC, alertId])).stdout).toContain(`${dashboardId}/lag`);
    expect((await cli(['alerts', 'delete', ORG, SVC, alertId])).stdout).toMatch(
      new RegExp(`^deleted alert ${alertId} \\(requestId `),
    );
    expectErrorExit(await cli(['alerts', 'get', ORG, SVC, alertId]), /^error: API_NOT_FOUND: Unknown .+ \(requestId /);
  });

  it('refuses a body that is not JSON, naming where it came from', async () => {
    expectErrorExit(await cli(['alerts', 'create', ORG, SVC], { input: '{not json' }), /^error: stdin: not valid JSON/);
    expectErrorExit(
      await cli(['dashboards', 'create', ORG, SVC, '--file', join(dir, 'missing.json')]),
      /^error: --file .*missing\.json: cannot read it \(ENOENT\)/,
    );
  });

  it("passes an invalid body through and shows the platform's 400", async () => {
    const run = await cli(['alerts', 'create', ORG, SVC], {
      input: JSON.stringify({ ...demoAlert(UNKNOWN_OBJECT_ID), interval: '2m' }),
    });
    expectErrorExit(run, /^error: API_BAD_REQUEST: (?!BAD_REQUEST).*interval/);
  });
});

describe('pipescaler api sources', () => {
  it('lists the data sources', async () => {
    const run = await cli(['sources', 'list', ORG, SVC]);
    expect(run.code).toBe(0);
    expect(lines(run.stdout).map((l) => l.split(/\s+/).slice(1, 3))).toEqual([
      ['NAME', 'KIND'],
      ['Logs', 'log'],
      ['Traces', 'trace'],
    ]);
  });
});

describe('waiting out a 429', () => {
  it("says on stderr that it waits for the key's window, then answers", async () => {
    const limited = await startCloud({ fixtures: CLOUD_FIXTURES, port: 0, rateLimit: { requests: 1, perMs: 8_000 } });
    try {
      // the key's one request of this window, spent here (the window outlasts a slow spawn of the bin)
      const client = new ApiClient({ baseUrl: limited.url, ...DEMO_KEY });
      await client.listServices(ORG);
      await client.close();
      const run = await cli(['services', 'list', ORG], { env: { PIPESCALER_API_URL: limited.url } });
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(
        /^rate limited \(429 on listServices\): waiting \d+(\.\d)? s for the key's window to reset, then trying again\n$/,
      );
      expect(lines(run.stdout)).toHaveLength(4);
    } finally {
      await limited.close();
    }
  });
});

describe('help texts', () => {
  it('say "an alert", and what --json prints', async () => {
    const get = await cli(['alerts', 'get', '--help']);
    expect(get.stdout).toContain('show an alert');
    expect(get.stdout).toMatch(/--json\s+one JSON object/);
    expect((await cli(['alerts', '--help'])).stdout).toMatch(/create an alert from JSON/);
    expect((await cli(['alerts', 'list', '--help'])).stdout).toMatch(/--json\s+one JSON array/);
    expect((await cli(['dashboards', '--help'])).stdout).toMatch(/delete a dashboard/);
  });
});
