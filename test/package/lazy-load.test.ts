// What production runs is what production loads: the embedded cloud's server (fastify, ajv) only
// for `baseUrl: embedded` or `pipescaler cloud`, pino-pretty only for a terminal. Checked on the
// built modules in a fresh process (CommonJS dependencies show in require.cache once loaded).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

function loadedAfter(script: string): string[] {
  const code = `
import { createRequire } from 'node:module';
${script}
const cache = Object.keys(createRequire(import.meta.url).cache);
const names = ['fastify', 'ajv', 'pino-pretty'].filter((n) => cache.some((p) => p.includes('/node_modules/' + n + '/')));
console.log(JSON.stringify(names));
`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 90_000 });
  if (r.status !== 0) throw new Error(r.stderr);
  // The logger's own line may come before or after (pino writes asynchronously): take the list's line.
  return JSON.parse(
    r.stdout
      .trim()
      .split('\n')
      .findLast((l) => l.startsWith('['))!,
  ) as string[];
}

const EVERY_COMMAND = ['api', 'cloud', 'policy', 'diff', 'daemon']
  .map((c) => `await import('./dist/cli/commands/${c}.js');`)
  .join('\n');

describe('lazy loading', () => {
  it('the daemon, the telemetry and every CLI command load neither fastify, ajv nor pino-pretty', () => {
    expect(
      loadedAfter(`${EVERY_COMMAND}
await import('./dist/daemon/index.js');
const { createLogger } = await import('./dist/telemetry/index.js');
createLogger({ pretty: false }).info('x');`),
    ).toEqual([]);
    // Importing every command takes 7 s on an idle CI machine and over 30 s on a loaded one.
  }, 120_000);

  it('a pretty logger loads pino-pretty, and only it', () => {
    expect(
      loadedAfter(`const { createLogger } = await import('./dist/telemetry/index.js');
const { Writable } = await import('node:stream');
createLogger({ pretty: true, destination: new Writable({ write(_c, _e, cb) { cb(); } }) }).info('x');`),
    ).toEqual(['pino-pretty']);
  });

  it('the embedded cloud loads fastify when it starts', () => {
    expect(
      loadedAfter(
        `const { startCloud } = await import('./dist/cloud/index.js'); const c = await startCloud({ fixtures: 'config/cloud.yaml', port: 0 }); await c.close();`,
      ),
    ).toContain('fastify');
  });
});
