// Appending other exporters' text (BullMQ's queue.exportPrometheusMetrics(), one call per queue)
// to prom-client's. Each BullMQ call repeats its own HELP and TYPE lines, and the text format
// allows one HELP/TYPE per family with its samples together, so families are regrouped here.

/** Anything with BullMQ's exporter (a bullmq Queue). */
export interface PrometheusExporter {
  exportPrometheusMetrics(globalVariables?: Record<string, string>): Promise<string>;
}

const SUFFIXES = ['_bucket', '_sum', '_count', '_total', '_created', '_info'];

interface Family {
  help?: string;
  type?: string;
  samples: string[];
}

function familyOf(sample: string, families: Map<string, Family>): string {
  if (families.has(sample)) return sample;
  for (const suffix of SUFFIXES) {
    if (sample.endsWith(suffix)) {
      const base = sample.slice(0, -suffix.length);
      if (families.get(base)?.type !== undefined) return base;
    }
  }
  return sample;
}

/** Merge exposition texts into one: one HELP and TYPE per family, its samples together. */
export function mergeExpositions(texts: readonly string[]): string {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let f = families.get(name);
    if (f === undefined) families.set(name, (f = { samples: [] }));
    return f;
  };
  for (const text of texts) {
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (line === '') continue;
      const [, kind, metaName] = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/.exec(line) ?? [];
      if (metaName !== undefined) {
        const f = family(metaName);
        if (kind === 'HELP') f.help ??= line;
        else f.type ??= line;
        continue;
      }
      if (line.startsWith('#')) continue;
      const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
      if (name === undefined) continue;
      family(familyOf(name, families)).samples.push(line);
    }
  }
  const out: string[] = [];
  for (const f of families.values()) {
    if (f.help !== undefined) out.push(f.help);
    if (f.type !== undefined) out.push(f.type);
    out.push(...f.samples);
  }
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

/** extraMetrics for startTelemetry from the daemon's current queues (a function: reloads add keys). */
export function queueMetrics(queues: () => Iterable<PrometheusExporter>): () => Promise<string> {
  return async () => mergeExpositions(await Promise.all([...queues()].map((q) => q.exportPrometheusMetrics())));
}
