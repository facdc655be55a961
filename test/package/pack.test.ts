// The package as a user gets it (the pino way): `npm pack`, install the tarball into an empty
// project (offline, from npm's cache), type-check and run a consumer that imports only what
// package.json "exports" publishes. Needs `npm run build` first, as every test of the bin does.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve('.');
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-pack-'));
const project = join(dir, 'consumer');
let files: string[] = [];
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONSUMER = `
import { ApiClient, ApiError, isApiError, Pipe, SCALING_LIMITS, type ScalingValues } from 'pipescaler';
import { startCloud, loadFixtures, demoCredentials } from 'pipescaler/cloud';

const fixtures = loadFixtures(new URL('../node_modules/pipescaler/config/cloud.yaml', import.meta.url).pathname);
const cloud = await startCloud({ fixtures, port: 0 });
const { keyId, keySecret } = demoCredentials(fixtures);
const client = new ApiClient({ baseUrl: cloud.url, keyId, keySecret, retry: false });
try {
  const org = fixtures.organizations[0]!;
  const { result } = await client.listServices(org.id);
  const wanted: ScalingValues = { replicas: SCALING_LIMITS.replicas.max };
  let code = '';
  try {
    await client.scalePipe({ organizationId: org.id, serviceId: '00000000-0000-4000-8000-000000000000', pipeId: '00000000-0000-4000-8000-000000000001' }, wanted);
  } catch (err) {
    if (err instanceof ApiError && isApiError(err)) code = err.code;
  }
  const parsed = Pipe.safeParse({}).success;
  console.log(JSON.stringify({ services: result.length, code, parsed }));
} finally {
  await client.close();
  await cloud.close();
}
`;

// Internals stay out of the public types: each line must fail to type-check.
const INTERNALS = `
// @ts-expect-error retryDelay is not public
import { retryDelay } from 'pipescaler';
// @ts-expect-error buildPath is not public
import { buildPath } from 'pipescaler';
// @ts-expect-error only 'pipescaler' and 'pipescaler/cloud' are exported
import { ApiClient } from 'pipescaler/dist/api/client.js';
export { retryDelay, buildPath, ApiClient };
`;

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 110_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

beforeAll(() => {
  const out = run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], ROOT);
  files = (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
  mkdirSync(join(project, 'src'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        outDir: 'dist',
        rootDir: 'src',
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')],
      },
      include: ['src'],
    }),
  );
  writeFileSync(join(project, 'src/main.ts'), CONSUMER);
  writeFileSync(join(project, 'src/internals.ts'), INTERNALS);
  run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--omit=dev', join(dir, tarball)],
    project,
  );
}, 120_000);

describe('the packed package', () => {
  it('ships declarations and no source maps', () => {
    expect(files).toContain('dist/api/index.d.ts');
    expect(files).toContain('dist/cloud/index.d.ts');
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
  });

  it('type-checks a consumer of pipescaler and pipescaler/cloud, and keeps internals out', () => {
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('runs the consumer against the embedded cloud from the tarball', () => {
    const out = execFileSync(process.execPath, ['dist/main.js'], { cwd: project, encoding: 'utf8', timeout: 30_000 });
    const r = JSON.parse(out) as { services: number; code: string; parsed: boolean };
    expect(r.services).toBeGreaterThan(0);
    expect(r.code).toBe('API_NOT_FOUND');
    expect(r.parsed).toBe(false);
  });
});
