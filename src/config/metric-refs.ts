// Load-time reference check of metric policies over the raw document, next to refs.ts: every
// placeholder of a policy's `metric.match` is known, and every pipe of that policy has the labels
// they name, so a pipe never meets an unresolvable template at run time.
import { templateRefs } from '../policy/index.js';
import { isRecord, type RawIssue } from './issue.js';

/**
 * Load-time check over the raw document: every placeholder of a policy's `metric.match` is known,
 * and every pipe of that policy has each label a placeholder names.
 */
export function metricMatchIssues(raw: unknown): RawIssue[] {
  const issues: RawIssue[] = [];
  if (!isRecord(raw) || !isRecord(raw.policies)) return issues;
  const pipes = Array.isArray(raw.pipes) ? raw.pipes : [];
  const prometheus = isRecord(raw.metrics) && raw.metrics.prometheus !== undefined;
  for (const [name, policy] of Object.entries(raw.policies)) {
    if (!isRecord(policy) || !isRecord(policy.metric)) continue;
    if (!prometheus) {
      issues.push({
        path: ['policies', name, 'metric'],
        atKey: true,
        message: 'a metric needs metrics.prometheus (url) to query',
      });
    }
    if (!isRecord(policy.metric.match)) continue;
    for (const [label, template] of Object.entries(policy.metric.match)) {
      if (typeof template !== 'string') continue;
      const path = ['policies', name, 'metric', 'match', label];
      const refs = templateRefs(template);
      for (const u of refs.unknown) {
        issues.push({
          path,
          message: `unknown placeholder ${u}: use {{ .labels.<name> }}, {{ .name }}, {{ .pipeId }}, {{ .serviceId }} or {{ .organizationId }}`,
        });
      }
      pipes.forEach((p, i) => {
        if (!isRecord(p) || p.policy !== name) return;
        const labels = isRecord(p.labels) ? p.labels : {};
        const missing = refs.labels.filter((l) => typeof labels[l] !== 'string');
        if (missing.length > 0) {
          const pipeName = typeof p.name === 'string' ? `"${p.name}"` : `pipes[${i}]`;
          issues.push({
            path: ['pipes', i, ...(isRecord(p.labels) ? ['labels'] : ['policy'])],
            message: `pipe ${pipeName} has no label ${missing.map((m) => `"${m}"`).join(', ')}, which policy "${name}" metric.match.${label} needs`,
          });
        }
      });
    }
  }
  return issues;
}
