// The real API client against the embedded cloud over HTTP: its attempts, retries and 429s land in
// the API metrics and the log, and its key secret in neither.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, isApiError } from '../../src/api/index.js';
import { demoCredentials, loadFixtures, startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import {
  Registry,
  bindClientEvents,
  bindClientLog,
  createLogger,
  createMetrics,
  secretForms,
} from '../../src/telemetry/index.js';
import { parseScrape, sampleValue } from './exposition-parse.js';

const fixtures = loadFixtures('config/cloud.yaml');
const demo = demoCredentials(fixtures);

describe('API metrics from a real client', () => {
  let cloud: EmbeddedCloud;
  let client: ApiClient;
  const registry = new Registry();
  const logLines: string[] = [];

  beforeAll(async () => {
    // random 0: an injected fault always fires; no rate limit until the test sets one; a still
    // clock, so the rate-limit window cannot roll over between the two calls that must hit it.
    cloud = await startCloud({
      fixtures,
      rateLimit: false,
      random: () => 0,
      now: () => Date.UTC(2026, 10, 23, 8, 0, 0),
    });
    client = new ApiClient({
      baseUrl: cloud.url,
      keyId: demo.keyId,
      keySecret: demo.keySecret,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
      sleep: async () => {}, // no real waiting between attempts
    });
    const metrics = createMetrics(registry, { defaultMetrics: false });
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        logLines.push(
          ...chunk
            .toString()
            .split('\n')
            .filter((l) => l !== ''),
        );
        done();
      },
    });
    const logger = createLogger({
      level: 'debug',
      pretty: false,
      destination,
      secrets: secretForms(demo.keySecret, demo.keyId),
    });
    bindClientEvents(client.events, metrics);
    bindClientLog(client.events, logger);

    await client.listServices(demo.organizationId);
    cloud.setFaults({ listServices: { error500: 1 } });
    await expect(client.listServices(demo.organizationId)).rejects.toSatisfy(
      (e) => isApiError(e) && e.code === 'API_SERVER_ERROR',
    );
    cloud.setFaults({});
    cloud.setRateLimit({ requests: 1, perMs: 5_000 });
    await client.listServices(demo.organizationId);
    await expect(client.listServices(demo.organizationId)).rejects.toSatisfy(
      (e) => isApiError(e) && e.code === 'API_RATE_LIMITED',
    );
  });

  afterAll(async () => {
    await client?.close();
    await cloud?.close();
  });

  it('observes each attempt by operation and HTTP status', async () => {
    const s = parseScrape(await registry.metrics());
    const count = (status: string) =>
      sampleValue(s, 'pipescaler_api_request_duration_seconds_count', { operation: 'listServices', status });
    expect(count('200')).toBe(2);
    expect(count('500')).toBe(2);
    expect(count('429')).toBe(2);
  });

  it('counts errors by code, retries, and 429s', async () => {
    const s = parseScrape(await registry.metrics());
    expect(sampleValue(s, 'pipescaler_api_errors_total', { operation: 'listServices', code: 'API_SERVER_ERROR' })).toBe(
      2,
    );
    expect(sampleValue(s, 'pipescaler_api_errors_total', { operation: 'listServices', code: 'API_RATE_LIMITED' })).toBe(
      2,
    );
    expect(
      sampleValue(s, 'pipescaler_api_retries_total', { operation: 'listServices', code: 'API_SERVER_ERROR' }),
    ).toBe(1);
    expect(sampleValue(s, 'pipescaler_api_rate_limited_total', { operation: 'listServices' })).toBe(2);
  });

  it('logs attempts, retries and 429s without the key secret', () => {
    const msgs = logLines.map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(msgs.filter((m) => m === 'api request')).toHaveLength(6);
    expect(msgs).toContain('api request retried');
    expect(msgs).toContain('api rate limited (429)');
    for (const line of logLines)
      for (const form of secretForms(demo.keySecret, demo.keyId)) expect(line).not.toContain(form);
  });
});
