// Concurrent scrapes share one render: 200 at once cost at most 2 renders of the registry (the
// clock frozen, so the reuse after a render never runs out mid-test), each answered with the same
// bytes, gzipped for those that ask; scrapes one after another each see a fresh render.
import { Agent, get } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { Gauge } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { Registry, startTelemetry, type TelemetryServer } from '../../src/telemetry/index.js';

let server: TelemetryServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A registry whose one gauge counts the renders that collected it. */
async function start(now = () => 1_795_420_800_000) {
  const registry = new Registry();
  let renders = 0;
  const value = { current: 0 };
  new Gauge({
    name: 'test_renders',
    help: 'renders so far',
    registers: [registry],
    collect() {
      renders += 1;
      this.set(value.current);
    },
  });
  // a body of some size, as a fleet's would be
  const big = new Gauge({ name: 'test_series', help: 'filler', labelNames: ['i'] as const, registers: [registry] });
  for (let i = 0; i < 5_000; i += 1) big.set({ i: String(i) }, i);
  server = await startTelemetry({
    listen: '127.0.0.1:0',
    registry,
    readiness: () => ({ redis: true, config: true, api: true }),
    now,
  });
  return { url: server.url, renders: () => renders, value };
}

function scrape(url: string, agent: Agent, gzip = false): Promise<{ status: number; body: Buffer; encoding?: string }> {
  return new Promise((resolve, reject) => {
    get(`${url}/metrics`, { agent, headers: gzip ? { 'accept-encoding': 'gzip' } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks),
          ...(res.headers['content-encoding'] ? { encoding: res.headers['content-encoding'] } : {}),
        }),
      );
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe('concurrent scrapes', () => {
  it('share at most 2 renders among 200 at once, every one answered with the same bytes', async () => {
    const { url, renders } = await start();
    const agent = new Agent({ keepAlive: false, maxSockets: 200 });
    try {
      const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => scrape(url, agent, i % 2 === 0)));
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(renders()).toBeGreaterThanOrEqual(1);
      expect(renders()).toBeLessThanOrEqual(2);
      const texts = new Set(answers.map((a) => (a.encoding === 'gzip' ? gunzipSync(a.body) : a.body).toString()));
      expect(texts.size).toBeLessThanOrEqual(renders());
      expect(answers.filter((a) => a.encoding === 'gzip').length).toBe(100);
      expect([...texts][0]).toContain('test_series{i="4999"} 4999');
    } finally {
      agent.destroy();
    }
  });

  it('renders afresh for each scrape that comes after the last one was answered', async () => {
    const { url, renders, value } = await start();
    const agent = new Agent({ keepAlive: true });
    try {
      for (let i = 1; i <= 5; i += 1) {
        value.current = i;
        const { body } = await scrape(url, agent);
        expect(body.toString()).toContain(`test_renders ${i}`);
      }
      expect(renders()).toBe(5);
    } finally {
      agent.destroy();
    }
  });
});
