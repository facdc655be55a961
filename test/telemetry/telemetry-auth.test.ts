// Credentials on the telemetry port: /metrics and /history answer 401 without them (or with wrong
// ones) and 200 with them, bearer or basic; /healthz and /readyz stay open for probes. The secret
// comes from the environment or a file, is refused written in the config, and never reaches a log
// line, an answer or a config error.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import {
  configSecrets,
  createLogger,
  startDaemonTelemetry,
  type DaemonTelemetry,
  type TelemetryConfigView,
} from '../../src/telemetry/index.js';
import { BASE } from '../config/config-fixture.js';

const TOKEN = 'tElEmEtRy-t0ken+9f2/x';
const PASSWORD = 'pR0m-pa55word+4e1';

let telemetry: DaemonTelemetry | undefined;
afterEach(async () => {
  await telemetry?.close();
  telemetry = undefined;
});

function collector(): { stream: Writable; text: () => string } {
  let all = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      all += chunk.toString();
      done();
    },
  });
  return { stream, text: () => all };
}

const load = (telemetryYaml: string, env: Record<string, string>, files: Record<string, string> = {}): Config =>
  parseConfig(`${BASE}telemetry:\n${telemetryYaml}`, {
    file: '/etc/pipescaler/pipescaler.yaml',
    env,
    readFile: (path) => {
      const content = files[path];
      if (content === undefined) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      return content;
    },
  });

async function serve(config: Config): Promise<{ url: string; log: () => string }> {
  const { stream, text } = collector();
  const view: TelemetryConfigView = { ...config, telemetry: { ...config.telemetry, listen: '127.0.0.1:0' } };
  telemetry = await startDaemonTelemetry({
    emitter: new DaemonEmitter(),
    logger: createLogger({ level: 'trace', pretty: false, destination: stream, secrets: () => configSecrets(config) }),
    config: () => view,
    queues: () => [],
    routes: { '/history': () => Promise.resolve({ status: 200, body: { pipes: [] } }) },
  });
  return { url: telemetry.url, log: text };
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('telemetry.auth', () => {
  it('asks /metrics and /history for the bearer token from the environment, and leaves /healthz and /readyz open', async () => {
    const config = load('  auth:\n    bearerToken: ${PIPESCALER_TELEMETRY_TOKEN}\n', {
      PIPESCALER_TELEMETRY_TOKEN: TOKEN,
    });
    expect(config.telemetry.auth).toEqual({ type: 'bearer', token: TOKEN });
    const { url, log } = await serve(config);
    for (const path of ['/metrics', '/history']) {
      const none = await fetch(`${url}${path}`);
      expect(none.status, path).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="pipescaler"');
      expect(await none.text()).not.toContain(TOKEN);
      expect((await fetch(`${url}${path}`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
      expect((await fetch(`${url}${path}`, { headers: { authorization: basic('x', TOKEN) } })).status).toBe(401);
      const ok = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(ok.status, path).toBe(200);
      await ok.arrayBuffer();
    }
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect([200, 503]).toContain((await fetch(`${url}/readyz`)).status);
    expect(log()).toContain('"auth":"bearer"');
    expect(log()).not.toContain(TOKEN);
  });

  it('asks for basic auth with the password from a file next to the config', async () => {
    const config = load(
      '  auth:\n    username: prometheus\n    passwordFile: secrets/telemetry-password\n',
      {},
      { '/etc/pipescaler/secrets/telemetry-password': `${PASSWORD}\n` },
    );
    expect(config.telemetry.auth).toEqual({ type: 'basic', username: 'prometheus', password: PASSWORD });
    const { url, log } = await serve(config);
    const none = await fetch(`${url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Basic realm="pipescaler"');
    expect((await fetch(`${url}/metrics`, { headers: { authorization: basic('prometheus', 'nope') } })).status).toBe(
      401,
    );
    expect((await fetch(`${url}/metrics`, { headers: { authorization: basic('other', PASSWORD) } })).status).toBe(401);
    const ok = await fetch(`${url}/metrics`, { headers: { authorization: basic('prometheus', PASSWORD) } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('pipescaler_build_info');
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(log()).not.toContain(PASSWORD);
  });

  it('is open without telemetry.auth', async () => {
    const { url } = await serve(load('  listen: 127.0.0.1:9464\n', {}));
    expect((await fetch(`${url}/metrics`)).status).toBe(200);
    expect((await fetch(`${url}/history`)).status).toBe(200);
  });

  it('refuses a secret written in the config, both kinds at once, and basic auth without a password, never quoting the secret', () => {
    const issues = (yaml: string, env: Record<string, string> = {}): string[] => {
      try {
        load(yaml, env);
      } catch (err) {
        return (err as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
      }
      throw new Error('accepted');
    };
    const literal = issues(`  auth:\n    bearerToken: ${TOKEN}\n`);
    expect(literal).toEqual([
      'telemetry.auth.bearerToken: a secret must not be written in the config file: use bearerToken: ${ENV_VAR} or bearerTokenFile: /path/to/file',
    ]);
    expect(literal.join()).not.toContain(TOKEN);
    const both = issues('  auth:\n    bearerToken: ${T}\n    username: u\n    password: ${P}\n', {
      T: TOKEN,
      P: PASSWORD,
    });
    expect(both).toEqual([
      'telemetry.auth: give a bearer token (bearerToken or bearerTokenFile) or basic auth (username and password), not both',
    ]);
    expect(issues('  auth:\n    username: prometheus\n')).toEqual([
      'telemetry.auth: basic auth needs password: ${ENV_VAR} or passwordFile',
    ]);
    expect(issues('  auth:\n    bearerToken: ${T}\n    perPipe: true\n', { T: TOKEN }).join()).not.toContain(TOKEN);
  });
});
