// The query that carries each sample's own time: which shapes keep their inputs' times (a
// selector, an aggregation of them), and which go as they are. Against a real Prometheus in
// test/daemon/sources/metric-source.test.ts.
import { describe, expect, it } from 'vitest';
import { pairKey, sampleTimeQuery, withSampleTimes } from '../../src/prometheus/sample-time.js';

describe('sampleTimeQuery', () => {
  it("takes a selector's own time", () => {
    expect(sampleTimeQuery('kafka_consumergroup_lag')).toBe('timestamp(kafka_consumergroup_lag)');
    expect(sampleTimeQuery(' lag{topic="a}b", cg=~"x|(y)"} ')).toBe('timestamp(lag{topic="a}b", cg=~"x|(y)"})');
    expect(sampleTimeQuery('{__name__="lag"}')).toBe('timestamp({__name__="lag"})');
    expect(sampleTimeQuery('(lag)')).toBe('timestamp(lag)');
  });

  it('takes the oldest input time of each group of an aggregation, grouping before or after, nested', () => {
    expect(sampleTimeQuery('sum by (consumergroup) (kafka_consumergroup_lag)')).toBe(
      'min by (consumergroup) (timestamp(kafka_consumergroup_lag))',
    );
    expect(sampleTimeQuery('sum(lag{topic="o"}) by (cg, topic)')).toBe(
      'min by (cg, topic) (timestamp(lag{topic="o"}))',
    );
    expect(sampleTimeQuery('max without (partition) (lag)')).toBe('min without (partition) (timestamp(lag))');
    expect(sampleTimeQuery('sum(lag)')).toBe('min (timestamp(lag))');
    expect(sampleTimeQuery('max by (cg) (sum by (cg, topic) (lag))')).toBe(
      'min by (cg) (min by (cg, topic) (timestamp(lag)))',
    );
  });

  it("leaves other shapes alone: their samples carry the query's time", () => {
    for (const q of [
      'rate(x[5m])',
      'sum(rate(x[5m]))',
      'lag offset 5m',
      'lag @ 100',
      'lag[5m]',
      'lag / 2',
      'sum(a) + sum(b)',
      'topk(3, lag)',
      'quantile(0.9, lag)',
      'vector(1)',
      'scalar(lag)',
      'sum by (cg) (lag) > 0',
      'by',
      '1',
    ])
      expect(sampleTimeQuery(q), q).toBeNull();
  });

  it('asks values and times in one query, told apart by a label of their own', () => {
    expect(withSampleTimes('sum by (cg) (lag)')).toBe(
      'label_replace((sum by (cg) (lag)), "pipescaler_part", "value", "", "") or label_replace(min by (cg) (timestamp(lag)), "pipescaler_part", "time", "", "")',
    );
    expect(withSampleTimes('rate(x[1m])')).toBeNull();
    // A selector's value keeps its name, its time does not: they pair on the other labels.
    expect(pairKey({ __name__: 'lag', cg: 'a', pipescaler_part: 'value' })).toBe(
      pairKey({ cg: 'a', pipescaler_part: 'time' }),
    );
  });
});
