// The Prometheus Operator's objects of the Kubernetes base, made from the files the compose demo
// and promtool use, so the alerts and the scrape settings have one source each:
//   config/prometheus/rules.yml       -> config/kubernetes/prometheusrule.yaml (its groups, as is)
//   config/prometheus/prometheus.yml  -> config/kubernetes/servicemonitor.yaml (the pipescaler
//                                        job's path and interval: rules.yml's timings assume it)
// It also writes the alerts' runbook links: every runbook_url of rules.yml and rules.test.yml is
// the base named in rules.yml's `# runbook base:` line + `#<alert, lower case>`, an absolute URL a
// notification can link (one setting: edit that line, run this).
// Run it after editing either (test/deploy/kubernetes.test.ts fails until then):
//   node .ci/generate-kubernetes.mjs           (re)write both
//   node .ci/generate-kubernetes.mjs --check   exit 1 when either is not current
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Document, parse, parseDocument } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (path) => readFileSync(`${root}${path}`, 'utf8');
const LABELS = { 'app.kubernetes.io/name': 'pipescaler', 'app.kubernetes.io/component': 'daemon' };

function header(source) {
  return (
    ` GENERATED from ${source} by node .ci/generate-kubernetes.mjs: edit that file, then run it.\n` +
    ' Needs the Prometheus Operator (monitoring.coreos.com/v1).'
  );
}

const RULES = 'config/prometheus/rules.yml';
const RULE_TESTS = 'config/prometheus/rules.test.yml';

/** The base of the runbook links, from rules.yml's `# runbook base: URL` line. */
export function runbookBase(rules = read(RULES)) {
  const m = /^# runbook base: (https?:\/\/\S+)$/m.exec(rules);
  if (!m) throw new Error(`${RULES} has no "# runbook base: https://..." line`);
  return m[1];
}

/** `text` with every runbook_url the base + its anchor. */
export function withRunbookLinks(text, base) {
  return text.replace(/runbook_url: "?[^"#\s]*#([a-z0-9-]+)"?/g, (_, anchor) => `runbook_url: "${base}#${anchor}"`);
}

const base = runbookBase();
const rulesText = withRunbookLinks(read(RULES), base);

export function prometheusRule() {
  const rules = parseDocument(rulesText);
  const doc = new Document({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'pipescaler', labels: { ...LABELS } },
    spec: {},
  });
  // The node itself, so each rule keeps the comment that says why it pages.
  doc.setIn(['spec', 'groups'], rules.get('groups', true));
  doc.commentBefore = header('config/prometheus/rules.yml');
  return doc.toString({ lineWidth: 0 });
}

export function serviceMonitor() {
  const prometheus = parse(read('config/prometheus/prometheus.yml'));
  const job = prometheus.scrape_configs.find((j) => j.job_name === 'pipescaler');
  if (!job) throw new Error('config/prometheus/prometheus.yml has no job pipescaler');
  const doc = new Document({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: 'pipescaler', labels: { ...LABELS } },
    spec: {
      selector: { matchLabels: { ...LABELS } },
      endpoints: [
        {
          port: 'metrics',
          path: job.metrics_path ?? '/metrics',
          interval: job.scrape_interval ?? prometheus.global.scrape_interval,
        },
      ],
    },
  });
  doc.commentBefore = header('config/prometheus/prometheus.yml');
  return doc.toString({ lineWidth: 0 });
}

const outputs = {
  [RULES]: rulesText,
  [RULE_TESTS]: withRunbookLinks(read(RULE_TESTS), base),
  'config/kubernetes/prometheusrule.yaml': prometheusRule(),
  'config/kubernetes/servicemonitor.yaml': serviceMonitor(),
};

if (process.argv.includes('--check')) {
  const stale = Object.entries(outputs)
    .filter(([path, text]) => {
      try {
        return read(path) !== text;
      } catch {
        return true;
      }
    })
    .map(([path]) => path);
  if (stale.length > 0) {
    console.error(`not current: ${stale.join(', ')}: run node .ci/generate-kubernetes.mjs`);
    process.exit(1);
  }
  console.log('the runbook links, config/kubernetes/prometheusrule.yaml and servicemonitor.yaml are current');
} else {
  for (const [path, text] of Object.entries(outputs)) writeFileSync(`${root}${path}`, text);
  console.log(`wrote ${Object.keys(outputs).join(', ')}`);
}
