// An alert reaches a person: the shipped rule PipescalerRedisStateLost (no `for`: it fires at its
// first evaluation) on a real Prometheus with config/prometheus/rules.yml, sent to a real
// Alertmanager (Debian's prometheus-alertmanager) running the shipped route of
// config/alertmanager/alertmanager.yml, whose receiver `operators` is given a webhook: the
// receiver this test runs gets the alert with its summary and an absolute runbook_url, then its
// resolution. The metric comes from a gauge exporter the test sets. Each server on a free loopback
// port, stopped by its own pid. Without the binaries the test is skipped (test/require-tool.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { startGaugeExporter, type GaugeExporter } from '../gauge-exporter.js';
import { PROMETHEUS_BIN, startPrometheus, type PrometheusServer } from '../prometheus.js';
import { requireTool } from '../require-tool.js';
import { freePort, kill } from '../redis-servers.js';

const ALERTMANAGER_BIN = process.env.ALERTMANAGER_BIN ?? 'prometheus-alertmanager';
const missing = !requireTool(ALERTMANAGER_BIN, 'prometheus-alertmanager') || !requireTool(PROMETHEUS_BIN, 'prometheus');

interface Notification {
  status: 'firing' | 'resolved';
  receiver: string;
  alerts: { status: string; labels: Record<string, string>; annotations: Record<string, string> }[];
}

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

/** The webhook receiver: every notification Alertmanager posts. */
async function startReceiver(): Promise<{ url: string; got: Notification[] }> {
  const got: Notification[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => (body += b.toString()));
    req.on('end', () => {
      got.push(JSON.parse(body) as Notification);
      res.writeHead(200).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  cleanup.push(() => new Promise((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`, got };
}

/** The shipped Alertmanager config, its receiver given the test's webhook and its waits shortened. */
async function startAlertmanager(webhook: string): Promise<string> {
  const shipped = parse(readFileSync('config/alertmanager/alertmanager.yml', 'utf8')) as {
    route: Record<string, unknown>;
    receivers: { name: string }[];
  };
  const config = {
    ...shipped,
    route: { ...shipped.route, group_wait: '1s', group_interval: '1s' },
    receivers: shipped.receivers.map((r) =>
      r.name === shipped.route.receiver ? { ...r, webhook_configs: [{ url: webhook, send_resolved: true }] } : r,
    ),
  };
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pstest-am-'));
  writeFileSync(join(dir, 'alertmanager.yml'), stringify(config));
  let out = '';
  const child: ChildProcess = spawn(
    ALERTMANAGER_BIN,
    [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stderr!.on('data', (b: Buffer) => (out = (out + b.toString()).slice(-4000)));
  cleanup.push(async () => {
    await kill(child);
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${port}`;
  await expect
    .poll(async () => (await fetch(`${url}/-/ready`).catch(() => null))?.status, { timeout: 20_000 })
    .toBe(200)
    .catch(() => {
      throw new Error(`alertmanager not ready: ${out}`);
    });
  return `127.0.0.1:${port}`;
}

describe.skipIf(missing)('an alert through a real Alertmanager', () => {
  it('reaches the webhook of the shipped route with an absolute runbook link, and resolves', async () => {
    const receiver = await startReceiver();
    const alertmanager = await startAlertmanager(receiver.url);
    const exporter: GaugeExporter = await startGaugeExporter();
    cleanup.push(() => exporter.close());
    exporter.set('pipescaler_redis_state_lost', { cause: 'flushed' }, 0);
    const prometheus: PrometheusServer = await startPrometheus({
      targets: [exporter.target],
      ruleFiles: ['config/prometheus/rules.yml'],
      alertmanagers: [alertmanager],
    });
    cleanup.push(() => prometheus.stop());
    await prometheus.waitFor('pipescaler_redis_state_lost', (r) => r.length === 1);
    // no false alert at start
    expect((await prometheus.alerts()).filter((a) => a.state === 'firing')).toEqual([]);

    exporter.set('pipescaler_redis_state_lost', { cause: 'flushed' }, 1);
    await expect.poll(() => receiver.got.length, { timeout: 30_000, interval: 250 }).toBeGreaterThan(0);
    const [first] = receiver.got;
    expect(first).toMatchObject({ status: 'firing', receiver: 'operators' });
    const alert = first!.alerts[0]!;
    expect(alert.labels).toMatchObject({ alertname: 'PipescalerRedisStateLost', cause: 'flushed' });
    expect(alert.annotations.summary).toBeTruthy();
    expect(alert.annotations.runbook_url).toMatch(/^https:\/\/\S+\/runbooks\.md#pipescalerredisstatelost$/);
    expect(receiver.got.every((n) => n.alerts.every((a) => a.labels.alertname === 'PipescalerRedisStateLost'))).toBe(
      true,
    );

    exporter.set('pipescaler_redis_state_lost', { cause: 'flushed' }, 0);
    await expect
      .poll(() => receiver.got.some((n) => n.status === 'resolved'), { timeout: 60_000, interval: 250 })
      .toBe(true);
  }, 120_000);
});
