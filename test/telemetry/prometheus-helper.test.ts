// The test helper that runs a real Prometheus: it scrapes a target, evaluates a rule file and
// answers queries and alerts through its HTTP API.
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMETHEUS_BIN, startPrometheus, type PrometheusServer } from '../prometheus.js';
import { requireTool } from '../require-tool.js';

const hasPrometheus = requireTool(PROMETHEUS_BIN, 'prometheus');

describe.skipIf(!hasPrometheus)('test/prometheus.ts', () => {
  let target: Server;
  let prom: PrometheusServer;
  let hits = 0;

  beforeAll(async () => {
    target = createServer((_req, res) => {
      hits += 1;
      res.setHeader('content-type', 'text/plain; version=0.0.4');
      res.end(`# TYPE helper_hits_total counter\nhelper_hits_total ${hits}\n`);
    });
    target.listen(0, '127.0.0.1');
    await once(target, 'listening');
    const port = (target.address() as { port: number }).port;
    const rules = [
      'groups:',
      '  - name: helper',
      '    rules:',
      '      - alert: HelperScraped',
      '        expr: helper_hits_total > 0',
      '        for: 1m',
      '        labels: { severity: info }',
    ].join('\n');
    prom = await startPrometheus({ targets: [`127.0.0.1:${port}`], rules: [rules] });
  });

  afterAll(async () => {
    await prom?.stop();
    target?.close();
  });

  it('scrapes the target, evaluates the rules and answers instant queries, ranges and alerts', async () => {
    const up = await prom.waitFor('up{job="pipescaler"}', (r) => r.length === 1 && r[0]!.value === 1);
    expect(up[0]!.metric.instance).toMatch(/^127\.0\.0\.1:\d+$/);
    await prom.waitFor('helper_hits_total', (r) => r.length === 1 && r[0]!.value > 0);
    const now = Date.now() / 1000;
    const range = await prom.queryRange('helper_hits_total', now - 10, now, 1);
    expect(range).toHaveLength(1);
    let alerts = await prom.alerts();
    for (let i = 0; i < 40 && alerts.length === 0; i += 1) {
      await new Promise((r) => setTimeout(r, 250));
      alerts = await prom.alerts();
    }
    expect(alerts.map((a) => [a.labels.alertname, a.state])).toEqual([['HelperScraped', 'pending']]);
    await expect(prom.query('sum(')).rejects.toThrow(/bad_data/);
  });
});
