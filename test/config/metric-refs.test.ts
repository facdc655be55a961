import { describe, expect, it } from 'vitest';
import { metricMatchIssues } from '../../src/config/metric-refs.js';
import { templateRefs } from '../../src/policy/metric-match.js';

describe('metricMatchIssues', () => {
  it('names placeholders and checks every pipe of the policy has their labels', () => {
    expect(templateRefs('{{ .labels.a }}-{{ .name }}-{{ .labels.b }}-{{ .nope }}')).toEqual({
      labels: ['a', 'b'],
      unknown: ['{{ .nope }}'],
    });
    const raw = {
      metrics: { prometheus: { url: 'http://x' } },
      policies: {
        lag: {
          metric: { query: 'q', match: { cg: '{{ .labels.consumerGroup }}', bad: '{{ .labels.x }} {{ .bogus }}' } },
        },
      },
      pipes: [
        { name: 'a', policy: 'lag', labels: { consumerGroup: 'g', x: '1' } },
        { name: 'b', policy: 'lag' },
        { name: 'c', policy: 'other' },
      ],
    };
    const issues = metricMatchIssues(raw).map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(issues).toEqual([
      'pipes.1.policy: pipe "b" has no label "consumerGroup", which policy "lag" metric.match.cg needs',
      expect.stringContaining('policies.lag.metric.match.bad: unknown placeholder {{ .bogus }}'),
      'pipes.1.policy: pipe "b" has no label "x", which policy "lag" metric.match.bad needs',
    ]);
    expect(metricMatchIssues({ policies: { lag: { metric: { query: 'q' } } } })[0]!.message).toContain(
      'metrics.prometheus',
    );
  });
});
