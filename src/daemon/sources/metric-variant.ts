// The name of a metric policy's query in its shared Redis keys: metric-source.ts stores each
// tick's result under it, forecast-source.ts its predictions.
import { createHash } from 'node:crypto';
import type { MetricSpec } from '../../policy/index.js';

/** What names a policy's query in its shared Redis keys: the query and what it is judged by. */
export function metricVariant(spec: MetricSpec): string {
  return createHash('sha1')
    .update(JSON.stringify([spec.query, spec.staleAfterMs]))
    .digest('hex')
    .slice(0, 12);
}
