// A key secret never reaches a log line or /metrics, over a run with errors, retries, 429s, a
// parked pipe and a failed reload, even where a careless caller puts it: an error message, a
// logged config object, an Authorization header, a Redis URL, a free-text reason.
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import type { Config } from '../../src/config/types.js';
import {
  Registry,
  bindAuditLog,
  bindClientEvents,
  bindClientLog,
  bindDaemonEvents,
  configSecrets,
  createLogger,
  createMetrics,
  secretForms,
  startTelemetry,
  type SecretBearingConfig,
  type TelemetryServer,
} from '../../src/telemetry/index.js';
import { scrape } from './exposition-parse.js';
import { emitClientRun, emitDaemonRun } from './run-events.js';

const MARKER = 'MaRkEr-s3cr3t+7f3a/9c';
const KEY_ID = 'pipescaler-demo-key';
const BASIC = Buffer.from(`${KEY_ID}:${MARKER}`).toString('base64');
/** Every spelling of the secret that must not appear. */
const FORBIDDEN = [MARKER, encodeURIComponent(MARKER), BASIC, 's3cr3t+7f3a'];

function collector(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  let pending = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      pending += chunk.toString();
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      lines.push(...parts.filter((l) => l !== ''));
      done();
    },
  });
  return { stream, lines };
}

/** What a careless caller might log directly, beside what the bindings log. */
function carelessLogging(logger: ReturnType<typeof createLogger>): void {
  logger.info(
    {
      config: {
        api: { baseUrl: 'http://cloud:8123', keys: { default: { keyId: KEY_ID, keySecret: MARKER } } },
        redis: { url: `redis://:${encodeURIComponent(MARKER)}@redis:6379` },
      },
    },
    'config loaded',
  );
  logger.info({ api: { keyId: KEY_ID, keySecret: MARKER } }, 'api key');
  logger.info({ keySecret: MARKER, password: MARKER }, 'flat secrets');
  logger.error({ err: new Error(`request failed; sent Authorization: Basic ${BASIC}`) }, 'apply failed');
  logger.error({ err: new Error(`upstream echoed the secret ${MARKER}`) }, 'apply failed');
  logger.warn(
    { req: { method: 'PATCH', headers: { authorization: `Basic ${BASIC}`, 'content-type': 'application/json' } } },
    'request',
  );
  logger.warn({ headers: { Authorization: `Bearer ${MARKER}` } }, 'headers');
  logger.warn({ redisUrl: `redis://default:${encodeURIComponent(MARKER)}@redis:6379/0` }, 'redis url');
  logger.info(`a message that interpolates the secret ${MARKER}`);
  logger.child({ keySecret: MARKER, pipe: 'orders-events' }).info('child with secret bindings');
}

describe.each([
  { mode: 'JSON', pretty: false },
  { mode: 'pretty', pretty: true },
])('secrets stay out ($mode logs and /metrics)', ({ pretty }) => {
  const out = collector();
  let server: TelemetryServer;
  let metricsText = '';

  beforeAll(async () => {
    const logger = createLogger({
      level: 'debug',
      pretty,
      destination: out.stream,
      secrets: secretForms(MARKER, KEY_ID),
    });
    const registry = new Registry();
    const metrics = createMetrics(registry, { version: '0.1.0' });
    const emitter = new DaemonEmitter();
    const clientEvents = new EventEmitter();
    bindDaemonEvents(emitter, metrics);
    bindAuditLog(emitter, logger);
    bindClientEvents(clientEvents, metrics);
    bindClientLog(clientEvents, logger);
    server = await startTelemetry({
      listen: '127.0.0.1:0',
      registry,
      readiness: () => ({ redis: true, config: true, api: true }),
    });
    emitDaemonRun(emitter, MARKER);
    emitClientRun(clientEvents);
    carelessLogging(logger);
    logger.flush();
    metricsText = (await scrape(server.url)).text;
  });

  afterAll(async () => {
    await server?.close();
  });

  it('logged the run (the check below is not vacuous)', () => {
    const all = out.lines.join('\n');
    expect(out.lines.length).toBeGreaterThan(20);
    for (const msg of [
      'scaling applied',
      'scaling failed',
      'decision skipped',
      'pipe parked',
      'config reload failed',
      'api request retried',
      'config loaded',
      'apply failed',
    ]) {
      expect(all).toContain(msg);
    }
    expect(all).toContain('[redacted]');
    expect(all).toContain(KEY_ID); // the key id is not secret, and stays readable
  });

  it('no log line holds the secret in any spelling', () => {
    for (const line of out.lines) for (const f of FORBIDDEN) expect(line).not.toContain(f);
  });

  it('no /metrics line holds the secret', () => {
    expect(metricsText).toContain('pipescaler_decisions_total');
    for (const f of FORBIDDEN) expect(metricsText).not.toContain(f);
  });
});

describe('redaction without the secret values configured', () => {
  it('censors secret-bearing keys, Authorization headers and URL credentials by their place alone', () => {
    const out = collector();
    const logger = createLogger({ level: 'info', pretty: false, destination: out.stream });
    carelessLogging(logger);
    const byMsg = (msg: string) =>
      out.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === msg);
    const [config] = byMsg('config loaded');
    expect(config).toMatchObject({
      config: {
        api: { keys: { default: { keyId: KEY_ID, keySecret: '[redacted]' } } },
        redis: { url: 'redis://[redacted]@redis:6379' },
      },
    });
    expect(byMsg('request')[0]).toMatchObject({
      req: { headers: { authorization: '[redacted]', 'content-type': 'application/json' } },
    });
    expect(byMsg('headers')[0]).toMatchObject({ headers: { Authorization: '[redacted]' } });
    expect(byMsg('flat secrets')[0]).toMatchObject({ keySecret: '[redacted]', password: '[redacted]' });
    expect(byMsg('child with secret bindings')[0]).toMatchObject({ keySecret: '[redacted]', pipe: 'orders-events' });
    // Text the paths cannot reach: Basic credentials in an error message.
    expect(out.lines.join('\n')).not.toContain(BASIC);
  });
});

describe('secrets given as a function', () => {
  it('scrubs a secret that a reload added after the logger was made', () => {
    const out = collector();
    let secrets: readonly string[] = [];
    const logger = createLogger({ level: 'info', pretty: false, destination: out.stream, secrets: () => secrets });
    logger.info(`before the reload: ${MARKER}`);
    secrets = secretForms(MARKER, KEY_ID);
    logger.info(`after the reload: ${MARKER}`);
    expect(out.lines[0]).toContain(MARKER); // not known yet: nothing to scrub it by
    expect(out.lines[1]).not.toContain(MARKER);
    expect(out.lines[1]).toContain('after the reload: [redacted]');
  });
});

/** The loaded Config is what the daemon passes: it must fit (a compile-time check). */
export const configFits = (config: Config): SecretBearingConfig => config;

describe('configSecrets', () => {
  it('lists every key secret (also as HTTP Basic) and the Redis password, once per config object', () => {
    const config = {
      api: {
        keys: {
          default: { keyId: KEY_ID, keySecret: MARKER },
          other: { keyId: 'other-key', keySecret: 'other-s3cret' },
        },
      },
      redis: { url: `redis://:${encodeURIComponent('r3dis pw')}@redis:6379` },
    };
    const secrets = configSecrets(config);
    expect(secrets).toEqual(
      expect.arrayContaining([MARKER, BASIC, encodeURIComponent(MARKER), 'other-s3cret', 'r3dis pw', 'r3dis%20pw']),
    );
    expect(configSecrets(config)).toBe(secrets); // same array: the scrubber is not rebuilt per line
    const out = collector();
    const logger = createLogger({
      level: 'info',
      pretty: false,
      destination: out.stream,
      secrets: () => configSecrets(config),
    });
    logger.info({ url: 'redis://redis:6379', note: 'password r3dis pw, other key other-s3cret' }, 'line');
    expect(out.lines[0]).not.toMatch(/r3dis pw|other-s3cret/);
  });
});

describe('configSecrets of notification sinks', () => {
  it("lists a webhook's HMAC key and a Slack sink's URL (its credential), not a plain webhook URL", () => {
    const slack = 'https://hooks.slack.com/services/T000/B000/slack-token-xyz';
    const config = {
      api: { keys: {} },
      redis: { url: 'redis://redis:6379' },
      notify: {
        sinks: [
          { type: 'webhook', url: 'https://hooks.example.com/x', secret: 'hmac-key-1234' },
          { type: 'slack', url: slack },
        ],
      },
    };
    const secrets = configSecrets(config);
    expect(secrets).toEqual(expect.arrayContaining(['hmac-key-1234', slack]));
    expect(secrets).not.toContain('https://hooks.example.com/x');
    const out = collector();
    const logger = createLogger({ level: 'info', pretty: false, destination: out.stream, secrets: () => secrets });
    logger.warn({ note: `posting to ${slack} with hmac-key-1234` }, 'line');
    expect(out.lines[0]).not.toMatch(/slack-token-xyz|hmac-key-1234/);
  });
});

describe('configSecrets of a Sentinel or Cluster config', () => {
  it('lists redis.password, redis.sentinelPassword and the password in a redis+sentinel:// or redis+cluster:// URL', () => {
    for (const url of [
      `redis+sentinel://:${encodeURIComponent('url pw-1')}@s1:26379,s2:26379/main`,
      `redis+cluster://app:${encodeURIComponent('url pw-1')}@n1:7000`,
    ]) {
      const config = { api: { keys: {} }, redis: { url, password: 'data-pw-2', sentinelPassword: 'sentinel-pw-3' } };
      const out = collector();
      const logger = createLogger({
        level: 'info',
        pretty: false,
        destination: out.stream,
        secrets: () => configSecrets(config),
      });
      logger.info({ note: 'url pw-1 url%20pw-1 data-pw-2 sentinel-pw-3' }, 'line');
      logger.error({ err: new Error('NOAUTH with data-pw-2; sentinel said sentinel-pw-3') }, 'connect failed');
      for (const line of out.lines) expect(line).not.toMatch(/url pw-1|url%20pw-1|data-pw-2|sentinel-pw-3/);
      expect(out.lines.join('\n')).toContain('[redacted]');
    }
  });
});
