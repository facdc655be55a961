// The Prometheus Operator's objects of the Kubernetes base, made from the files the compose demo
// and promtool use, so the alerts and the scrape settings have one source each:
//   config/prometheus/rules.yml       -> config/kubernetes/prometheusrule.yaml (its groups, as is)
//   config/prometheus/prometheus.yml  -> config/kubernetes/servicemonitor.yaml (the pipescaler
//                                        job's path and interval: rules.yml's timings assume it)
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

export function prometheusRule() {
  const rules = parseDocument(read('config/prometheus/rules.yml'));
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
  console.log('config/kubernetes/prometheusrule.yaml and servicemonitor.yaml are current');
} else {
  for (const [path, text] of Object.entries(outputs)) writeFileSync(`${root}${path}`, text);
  console.log(`wrote ${Object.keys(outputs).join(', ')}`);
}
