// The telemetry endpoint's routes, its listen address, and the merging of appended exporters.
import { afterEach, describe, expect, it } from 'vitest';
import {
  Registry,
  createMetrics,
  mergeExpositions,
  parseListen,
  startTelemetry,
  type ReadinessReport,
  type TelemetryServer,
} from '../../src/telemetry/index.js';

let server: TelemetryServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(
  readiness: () => ReadinessReport | Promise<ReadinessReport>,
  extraMetrics?: () => Promise<string>,
) {
  const registry = new Registry();
  createMetrics(registry, { defaultMetrics: false, version: '1.2.3' });
  server = await startTelemetry({
    listen: '127.0.0.1:0',
    registry,
    readiness,
    ...(extraMetrics ? { extraMetrics, extraMetricsTimeoutMs: 200 } : {}),
  });
  return { server, registry };
}

describe('parseListen', () => {
  it('reads host:port, a bare :port and a bracketed IPv6 host', () => {
    expect(parseListen('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseListen('0.0.0.0:0')).toEqual({ host: '0.0.0.0', port: 0 });
    expect(parseListen(':9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseListen('[::1]:9464')).toEqual({ host: '::1', port: 9464 });
  });

  it('names the setting when the address is not host:port', () => {
    expect(() => parseListen('9464')).toThrow('telemetry.listen: "9464" is not host:port');
    expect(() => parseListen('localhost:99999')).toThrow('telemetry.listen');
  });
});

describe('startTelemetry', () => {
  it('serves /metrics in the Prometheus text format, with build info', async () => {
    const { server } = await start(() => ({ redis: true, config: true, api: true }));
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const text = await res.text();
    expect(text).toContain(`pipescaler_build_info{version="1.2.3",node="${process.versions.node}"} 1`);
    expect(text).toContain('pipescaler_ready 1');
    expect(text).not.toContain('pipescaler_extra_metrics_up'); // nothing appended: no such gauge
  });

  it('names telemetry.listen when the port is taken, and leaves the registry as it was', async () => {
    const { server: first } = await start(() => ({ redis: true, config: true, api: true }));
    const registry = new Registry();
    const taken = first.url.replace('http://', '');
    await expect(
      startTelemetry({ listen: taken, registry, readiness: () => ({ redis: true, config: true, api: true }) }),
    ).rejects.toThrow(
      `telemetry.listen: ${taken} is already in use (another pipescaler, or another program, listens there): ` +
        'set telemetry.listen (or PIPESCALER_TELEMETRY_LISTEN) to a free host:port',
    );
    expect(registry.getMetricsAsArray()).toEqual([]);
  });

  it('answers /healthz 200 even when not ready', async () => {
    const { server } = await start(() => ({ redis: false, config: false, api: false }));
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz 503 naming each failed check', async () => {
    const { server } = await start(async () => ({ redis: true, config: false, api: false }));
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      status: 'not ready',
      failed: ['config', 'api'],
      checks: { redis: 'ok', config: 'failed', api: 'failed' },
    });
  });

  it('treats a readiness function that throws as not ready, without echoing its error', async () => {
    const { server } = await start(() => {
      throw new Error('boom with details');
    });
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    const body = await res.text();
    expect(body).toContain('"failed":["readiness"]');
    expect(body).not.toContain('boom');
    expect(await (await fetch(`${server.url}/metrics`)).text()).toContain('pipescaler_ready 0');
  });

  it('answers 404 for other paths and 405 for other methods', async () => {
    const { server } = await start(() => ({ redis: true, config: true, api: true }));
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    const post = await fetch(`${server.url}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('serves the scrape without the appended text when the exporter is too slow, and says so', async () => {
    const { server } = await start(
      () => ({ redis: true, config: true, api: true }),
      () => new Promise<string>(() => {}),
    );
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toContain('pipescaler_extra_metrics_up 0');
    expect(text).toContain('pipescaler_build_info');
  });

  it('asks a hanging exporter once, not once per scrape', async () => {
    let calls = 0;
    const { server } = await start(
      () => ({ redis: true, config: true, api: true }),
      () => {
        calls++;
        return new Promise<string>(() => {});
      },
    );
    for (let i = 0; i < 3; i++)
      expect(await (await fetch(`${server.url}/metrics`)).text()).toContain('pipescaler_extra_metrics_up 0');
    expect(calls).toBe(1);
  });

  it('removes its own gauges on close, so the registry can serve again', async () => {
    const { server: first, registry } = await start(() => ({ redis: true, config: true, api: true }));
    await first.close();
    server = await startTelemetry({
      listen: '127.0.0.1:0',
      registry,
      readiness: () => ({ redis: true, config: true, api: true }),
    });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});

describe('mergeExpositions', () => {
  it('keeps one HELP and TYPE per family with its samples together', () => {
    const a =
      '# HELP bullmq_job_count Jobs\n# TYPE bullmq_job_count gauge\nbullmq_job_count{queue="a", state="waiting"} 1\n# HELP bullmq_job_failed_total F\n# TYPE bullmq_job_failed_total counter\nbullmq_job_failed_total{queue="a"} 0';
    const b = a.replaceAll('queue="a"', 'queue="b"');
    expect(mergeExpositions([a, b])).toBe(
      [
        '# HELP bullmq_job_count Jobs',
        '# TYPE bullmq_job_count gauge',
        'bullmq_job_count{queue="a", state="waiting"} 1',
        'bullmq_job_count{queue="b", state="waiting"} 1',
        '# HELP bullmq_job_failed_total F',
        '# TYPE bullmq_job_failed_total counter',
        'bullmq_job_failed_total{queue="a"} 0',
        'bullmq_job_failed_total{queue="b"} 0',
        '',
      ].join('\n'),
    );
  });

  it('groups histogram series under their family', () => {
    const h = '# TYPE x histogram\nx_bucket{le="1"} 1\nx_sum 1\n# TYPE y gauge\ny 2\nx_count 1\n';
    expect(mergeExpositions([h])).toBe(
      '# TYPE x histogram\nx_bucket{le="1"} 1\nx_sum 1\nx_count 1\n# TYPE y gauge\ny 2\n',
    );
  });

  it('is empty for nothing', () => {
    expect(mergeExpositions([])).toBe('');
    expect(mergeExpositions(['', '\n'])).toBe('');
  });
});
