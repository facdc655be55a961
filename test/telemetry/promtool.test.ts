// promtool checks the Prometheus config and the alert rules, and runs the rules' unit tests
// (config/prometheus/rules.test.yml fires each alert). Skipped on a machine without promtool
// (test/require-tool.ts); under CI a missing promtool fails the run (.ci/run installs it).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { PARSE_VARIABLES, dashboardExpressions, substituteVariables } from './promql-names.js';
import { describe, expect, it } from 'vitest';
import { PROMTOOL_BIN as PROMTOOL } from '../prometheus.js';
import { requireTool } from '../require-tool.js';

const hasPromtool = requireTool(PROMTOOL, 'prometheus');

function promtool(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync(PROMTOOL, args, { encoding: 'utf8', cwd: 'config/prometheus' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe.skipIf(!hasPromtool)('Prometheus config and alert rules (promtool)', () => {
  it('accepts prometheus.yml', () => {
    const run = promtool('check', 'config', 'prometheus.yml');
    expect(run.output).toContain('SUCCESS');
    expect(run.status, run.output).toBe(0);
  });

  it('accepts rules.yml', () => {
    const run = promtool('check', 'rules', 'rules.yml');
    expect(run.status, run.output).toBe(0);
  });

  it('passes the rules unit tests', () => {
    const run = promtool('test', 'rules', 'rules.test.yml');
    expect(run.status, run.output).toBe(0);
    expect(run.output).toContain('SUCCESS');
  });

  it('parses every query of the Grafana dashboard as PromQL', () => {
    // Grafana substitutes its variables before Prometheus sees a query; do the same, then let
    // promtool parse each one as a recording rule.
    const dashboard = JSON.parse(readFileSync('config/grafana/dashboards/pipescaler.json', 'utf8')) as unknown;
    const exprs = dashboardExpressions(dashboard)
      .filter((e) => !e.startsWith('label_values('))
      .map((e) => substituteVariables(e, PARSE_VARIABLES));
    for (const e of exprs) expect(e, 'a variable is left').not.toContain('$');
    expect(exprs.length).toBeGreaterThan(15);
    const dir = mkdtempSync(join(tmpdir(), 'pipescaler-dashboard-'));
    try {
      const file = join(dir, 'dashboard-queries.yml');
      writeFileSync(
        file,
        stringify({
          groups: [{ name: 'dashboard', rules: exprs.map((expr, i) => ({ record: `dashboard:query:${i}`, expr })) }],
        }),
      );
      const run = promtool('check', 'rules', file);
      expect(run.status, run.output).toBe(0);
      expect(run.output).toContain(`SUCCESS: ${exprs.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has a unit test that fires each alert, and every alert has a summary, a description and a runbook', () => {
    const runbooks = readFileSync('docs/runbooks.md', 'utf8');
    const anchors = new Set([...runbooks.matchAll(/^## (\S+)$/gm)].map((m) => m[1]!.toLowerCase()));
    const rules = parse(readFileSync('config/prometheus/rules.yml', 'utf8')) as {
      groups: { rules: { alert: string; annotations?: Record<string, string> }[] }[];
    };
    const tests = parse(readFileSync('config/prometheus/rules.test.yml', 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
    const base = /^# runbook base: (https:\/\/\S+\/runbooks\.md)$/m.exec(
      readFileSync('config/prometheus/rules.yml', 'utf8'),
    )?.[1];
    expect(base, 'rules.yml names its runbook base').toBeDefined();
    const fired = new Set(
      tests.tests
        .flatMap((t) => t.alert_rule_test ?? [])
        .filter((a) => a.exp_alerts.length > 0)
        .map((a) => a.alertname),
    );
    expect(alerts.length).toBeGreaterThanOrEqual(5);
    for (const alert of alerts) {
      expect(fired, `no unit test fires ${alert.alert}`).toContain(alert.alert);
      expect(alert.annotations?.summary, `${alert.alert} summary`).toBeTruthy();
      expect(alert.annotations?.description, `${alert.alert} description`).toBeTruthy();
      // Each alert links its runbook, a section of docs/runbooks.md, by an absolute URL (a
      // notification has no repository to be relative to): the one base of rules.yml + the anchor.
      expect(alert.annotations?.runbook_url, `${alert.alert} runbook_url`).toBe(`${base}#${alert.alert.toLowerCase()}`);
      expect(anchors, `docs/runbooks.md has no section for ${alert.alert}`).toContain(alert.alert.toLowerCase());
    }
  });
});
