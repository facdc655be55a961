// Which sample of a policy's query result is a pipe's: `match` maps sample labels to templates
// that name the pipe's own values (`{{ .labels.consumerGroup }}`, `{{ .name }}`, `{{ .pipeId }}`,
// `{{ .serviceId }}`, `{{ .organizationId }}`). Pure; the load-time check that every pipe of the
// policy has every label a placeholder names is src/config/metric-refs.ts.
import type { MetricReading, PipeConfig } from './types.js';

/** One sample of an instant vector: its labels and its value ("NaN", "+Inf" parsed as numbers). */
export interface Sample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  /** The sample's own time (epoch ms) when the query told it (src/prometheus/sample-time.ts). */
  readonly at?: number;
}

const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;
const LABEL_REF = /^\.labels\.([A-Za-z_][A-Za-z0-9_]*)$/;
const PIPE_FIELDS = ['.name', '.pipeId', '.serviceId', '.organizationId'] as const;

export interface TemplateRefs {
  /** `pipes[].labels` names the template needs. */
  readonly labels: readonly string[];
  /** Placeholders that name nothing known. */
  readonly unknown: readonly string[];
}

export function templateRefs(template: string): TemplateRefs {
  const labels: string[] = [];
  const unknown: string[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    const inner = m[1] ?? ''; // the group always takes part in a match
    const label = LABEL_REF.exec(inner)?.[1];
    if (label !== undefined) labels.push(label);
    else if (!(PIPE_FIELDS as readonly string[]).includes(inner)) unknown.push(m[0]);
  }
  return { labels, unknown };
}

type PipeValues = Pick<PipeConfig, 'name' | 'pipeId' | 'serviceId' | 'organizationId' | 'labels'>;

/** A template with the pipe's values in place (a label the pipe lacks becomes ''; load checks it). */
export function resolveTemplate(template: string, pipe: PipeValues): string {
  return template.replace(PLACEHOLDER, (_all, inner: string) => {
    const label = LABEL_REF.exec(inner)?.[1];
    if (label !== undefined) return pipe.labels?.[label] ?? '';
    switch (inner) {
      case '.name':
        return pipe.name;
      case '.pipeId':
        return pipe.pipeId;
      case '.serviceId':
        return pipe.serviceId;
      case '.organizationId':
        return pipe.organizationId;
      default:
        return '';
    }
  });
}

/** The label values a pipe's sample must have. */
export function resolveMatch(match: Readonly<Record<string, string>>, pipe: PipeValues): Record<string, string> {
  return Object.fromEntries(Object.entries(match).map(([k, t]) => [k, resolveTemplate(t, pipe)]));
}

/** The key of a sample (or of a resolved match) over the match's label names, in a fixed order. */
export function matchKey(labelNames: readonly string[], labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(labelNames.map((n) => labels[n] ?? ''));
}

/** Samples grouped by their values of the match's labels: one lookup per pipe instead of a scan. */
export function indexSamples<S extends { readonly labels: Readonly<Record<string, string>> }>(
  samples: readonly S[],
  labelNames: readonly string[],
): Map<string, S[]> {
  const index = new Map<string, S[]>();
  for (const s of samples) {
    const key = matchKey(labelNames, s.labels);
    const list = index.get(key);
    if (list) list.push(s);
    else index.set(key, [s]);
  }
  return index;
}

function describeMatch(wanted: Readonly<Record<string, string>>): string {
  const parts = Object.entries(wanted).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return parts.length > 0 ? `{${parts.join(', ')}}` : 'the query';
}

/** The pipe's value from the samples that match, at the sample's own time (else `at`, the
 *  vector's); an error when not exactly one. */
export function selectSample(
  matching: readonly Sample[],
  wanted: Readonly<Record<string, string>>,
  at: number,
): MetricReading {
  const [one] = matching;
  if (one === undefined) return { error: `no sample matches ${describeMatch(wanted)}` };
  if (matching.length > 1)
    return { error: `${matching.length} samples match ${describeMatch(wanted)}; the match must pick one` };
  return { value: one.value, at: one.at ?? at };
}

/** Prometheus' text of a sample value as a number ("NaN", "+Inf", "-Inf" included). */
export function parseSampleValue(text: string): number {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}
