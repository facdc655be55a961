// The registry's text as prom-client's registry.metrics() writes it, with the families that keep
// their own text (LineGauge: a series per pipe) taken as they are instead of formatted anew.
import type { Registry } from 'prom-client';

interface WithExposition {
  exposition(): string;
}

const hasExposition = (m: unknown): m is WithExposition =>
  typeof (m as Partial<WithExposition>).exposition === 'function';

/** The registry's exposition text (default labels, which no pipescaler registry sets, take prom-client's path). */
export async function renderRegistry(registry: Registry): Promise<string> {
  const defaults = (registry as unknown as { _defaultLabels?: object })._defaultLabels ?? {};
  if (Object.keys(defaults).length > 0) return registry.metrics();
  const own = registry as unknown as { getMetricsAsString(m: unknown): Promise<string> };
  const parts = await Promise.all(
    registry
      .getMetricsAsArray()
      .map((m) => (hasExposition(m) ? Promise.resolve(m.exposition()) : own.getMetricsAsString(m))),
  );
  return `${parts.join('\n\n')}\n`;
}
