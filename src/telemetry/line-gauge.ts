// A gauge for the families with a series per pipe (desired and applied per field, failing,
// paused, unconfirmed): 10,000 pipes make 90,000 of their samples. prom-client formats every
// sample of every series at every scrape (280 ms of CPU for those on a 2-core VM); this one keeps
// each series' line, remakes it only when its value changes, and keeps the family's text until
// one does, so a scrape of a fleet that did not move costs a join. Set, remove and reset only (the
// calls the bindings make); get() answers as prom-client's Gauge does, for registry.metrics().
import { Gauge } from 'prom-client';

type LabelValues<T extends string> = Partial<Record<T, string | number>>;

interface Series {
  readonly labels: Record<string, string | number>;
  readonly prefix: string;
  value: number;
  line: string;
}

const escapeLabel = (v: string | number): string =>
  typeof v === 'string' ? v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') : String(v);
const escapeHelp = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function valueText(value: number): string {
  if (Number.isNaN(value)) return 'Nan';
  if (!Number.isFinite(value)) return value < 0 ? '-Inf' : '+Inf';
  return `${value}`;
}

export interface LineGaugeConfiguration<T extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly T[];
  readonly registers: readonly import('prom-client').Registry[];
}

export class LineGauge<T extends string> extends Gauge<T> {
  private readonly series = new Map<string, Series>();
  private text: string | undefined;
  private readonly names: readonly T[];
  private readonly family: string;
  private readonly helpText: string;
  /** For a 0/1 condition (failing, paused, unconfirmed): whether a 0 keeps its series. When this
   *  says false (per-pipe detail off), a pipe's condition has a series only while it holds, so a
   *  healthy pipe costs no line for it. Default: always kept. */
  keepZeros: () => boolean = () => true;

  constructor(config: LineGaugeConfiguration<T>) {
    super({ name: config.name, help: config.help, labelNames: config.labelNames, registers: [...config.registers] });
    this.names = config.labelNames;
    this.family = config.name;
    this.helpText = config.help;
  }

  private keyOf(labels: LabelValues<T>): string {
    for (const k of Object.keys(labels))
      if (!(this.names as readonly string[]).includes(k))
        throw new Error(`Added label "${k}" is not included in initial labelset: ${JSON.stringify(this.names)}`);
    return this.names.map((n) => String(labels[n] ?? '')).join('\u0001');
  }

  override set(labels: LabelValues<T> | number, value?: number): void {
    if (typeof labels === 'number' || value === undefined) throw new Error(`${this.family}: set(labels, value) only`);
    const key = this.keyOf(labels);
    if (value === 0 && !this.keepZeros()) {
      if (this.series.delete(key)) this.text = undefined;
      return;
    }
    const s = this.series.get(key);
    if (s !== undefined) {
      if (Object.is(s.value, value)) return;
      s.value = value;
      s.line = s.prefix + valueText(value);
    } else {
      const own: Record<string, string | number> = {};
      const parts: string[] = [];
      for (const n of this.names) {
        const v = labels[n];
        if (v === undefined) continue;
        own[n] = v;
        parts.push(`${n}="${escapeLabel(v)}"`);
      }
      const prefix = parts.length === 0 ? `${this.family} ` : `${this.family}{${parts.join(',')}} `;
      this.series.set(key, { labels: own, prefix, value, line: prefix + valueText(value) });
    }
    this.text = undefined;
  }

  override remove(...args: unknown[]): void {
    const labels = args[0];
    if (typeof labels !== 'object' || labels === null) throw new Error(`${this.family}: remove(labels) only`);
    if (this.series.delete(this.keyOf(labels))) this.text = undefined;
  }

  override reset(): void {
    // called by prom-client's own constructor before this class's fields exist
    if ((this.series as Map<string, Series> | undefined) === undefined) return;
    if (this.series.size > 0) this.text = undefined;
    this.series.clear();
  }

  override inc(): void {
    throw new Error(`${this.family}: set() only`);
  }

  override dec(): void {
    throw new Error(`${this.family}: set() only`);
  }

  override get(): ReturnType<Gauge<T>['get']> {
    return Promise.resolve({
      help: this.helpText,
      name: this.family,
      type: 'gauge',
      values: [...this.series.values()].map((s) => ({ value: s.value, labels: s.labels })),
      aggregator: 'sum',
    } as unknown as Awaited<ReturnType<Gauge<T>['get']>>);
  }

  /** The family in the text format (HELP, TYPE, one line per series), as registry.metrics() writes it. */
  exposition(): string {
    if (this.text === undefined) {
      const lines = [`# HELP ${this.family} ${escapeHelp(this.helpText)}`, `# TYPE ${this.family} gauge`];
      for (const s of this.series.values()) lines.push(s.line);
      this.text = lines.join('\n');
    }
    return this.text;
  }
}
