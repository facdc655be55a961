// The docs' tables against what ships: every pipescaler_* metric the daemon's telemetry registers
// has a row in a metric table of the README or docs/, and every row names a metric that exists;
// every alert of the rule files has its row in the alert table of docs/dashboard-and-alerts.md and
// its runbook section.
import { readdirSync, readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import { createLogger, startDaemonTelemetry } from '../../src/telemetry/index.js';

const root = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');
const DOCS = [
  'README.md',
  ...readdirSync(new URL('docs/', root))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The metric names in the first cell of the docs' table rows that start with a pipescaler_ metric. */
function documentedMetrics(): Set<string> {
  const names = new Set<string>();
  for (const doc of DOCS) {
    for (const line of read(doc).split('\n')) {
      if (!line.startsWith('| `pipescaler_')) continue;
      const firstCell = line.split('|')[1] ?? '';
      for (const m of firstCell.matchAll(/`(pipescaler_[a-z0-9_]+)/g)) names.add(m[1]!);
    }
  }
  return names;
}

async function exportedMetrics(): Promise<Set<string>> {
  const registry = new Registry();
  const telemetry = await startDaemonTelemetry({
    emitter: new DaemonEmitter(),
    logger: createLogger({ level: 'silent', pretty: false }),
    config: () => ({
      pipes: [{ name: 'orders-events' }],
      evaluate: { reconcileMs: 600_000 },
      telemetry: { listen: '127.0.0.1:0' },
      notify: { sinks: [{ name: 'ops' }] },
    }),
    queues: () => [],
    registry,
  });
  try {
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name);
    return new Set(names.filter((n) => n.startsWith('pipescaler_')));
  } finally {
    await telemetry.close();
  }
}

function shippedAlerts(file: string, rulesAt: (doc: Record<string, unknown>) => unknown): string[] {
  const groups = rulesAt(parse(read(file)) as Record<string, unknown>) as { rules: { alert?: string }[] }[];
  return groups.flatMap((g) => g.rules.map((r) => r.alert).filter((a): a is string => a !== undefined)).sort();
}

describe('the docs tables match what ships', () => {
  it('every exported metric has a row, and every row names an exported metric', async () => {
    const exported = await exportedMetrics();
    const documented = documentedMetrics();
    expect([...exported].filter((n) => !documented.has(n)).sort(), 'exported, not in a docs table').toEqual([]);
    expect([...documented].filter((n) => !exported.has(n)).sort(), 'in a docs table, not exported').toEqual([]);
    // the ones an operator asked for by name
    for (const name of ['pipescaler_evaluations_total', 'pipescaler_apply_retries_total', 'pipescaler_redis_up'])
      expect(documented).toContain(name);
  });

  it('every shipped alert has its row in the alert table and its runbook section, and no other', () => {
    const alerts = shippedAlerts('config/prometheus/rules.yml', (d) => d.groups);
    expect(alerts.length).toBeGreaterThanOrEqual(16);
    // the Kubernetes PrometheusRule ships the same rules
    expect(
      shippedAlerts('config/kubernetes/prometheusrule.yaml', (d) => (d.spec as { groups: unknown }).groups),
    ).toEqual(alerts);
    const table = read('docs/dashboard-and-alerts.md');
    const rows = [...table.matchAll(/^\| (Pipescaler[A-Za-z]+) \|/gm)].map((m) => m[1]!).sort();
    expect(rows).toEqual(alerts);
    const sections = [...read('docs/runbooks.md').matchAll(/^## (Pipescaler[A-Za-z]+)$/gm)].map((m) => m[1]!).sort();
    expect(sections).toEqual(alerts);
  });
});
