// What every bench figure carries (N, the machine, the median of several runs) and how the
// results are shown: a table on stdout and bench/results.json.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';

export interface Machine {
  readonly cores: number;
  readonly cpu: string;
  readonly node: string;
  readonly platform: string;
  readonly totalMemoryMb: number;
  /** 1-minute load average when the bench started: the machine is shared, figures move with it. */
  readonly loadAverage: number;
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    totalMemoryMb: Math.round(os.totalmem() / 2 ** 20),
    loadAverage: Math.round(os.loadavg()[0]! * 100) / 100,
  };
}

/** One figure of the table. `value` null means not measured, and `note` says why. */
export interface Figure {
  readonly scenario: string;
  readonly metric: string;
  readonly value: number | null;
  readonly unit: string;
  /** The size of the workload (requests, pipes, jobs). */
  readonly n: number;
  /** Every run's value; `value` is their median. Empty for a count fixed by construction. */
  readonly runs: readonly number[];
  readonly goal?: string;
  readonly pass?: boolean;
  readonly note?: string;
  /** When the figure was measured (run.ts stamps it). */
  readonly measuredAt?: string;
  /** The command that measured it (run.ts stamps it). */
  readonly command?: string;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of nothing');
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function notRun(scenario: string, metric: string, n: number, goal: string, why: string): Figure {
  return { scenario, metric, value: null, unit: '', n, runs: [], goal, note: `not run: ${why}` };
}

const fmt = (v: number | null, unit = ''): string => {
  if (v === null) return '-';
  if (unit === 'ratio') return v.toFixed(2);
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3);
};

export function table(figures: readonly Figure[], m: Machine): string {
  const head = ['scenario', 'metric', 'median', 'unit', 'N', 'runs', 'goal', 'ok', 'note'];
  const rows = figures.map((f) => [
    f.scenario,
    f.metric,
    fmt(f.value, f.unit),
    f.unit,
    String(f.n),
    f.runs.map((r) => fmt(r, f.unit)).join(' '),
    f.goal ?? '',
    f.pass === undefined ? '' : f.pass ? 'yes' : 'NO',
    f.note ?? '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [
    `machine: ${m.cores} cores (${m.cpu}), Node ${m.node}, ${m.platform}, ${m.totalMemoryMb} MB, load average ${m.loadAverage} at start`,
    line(head),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.map(line),
  ].join('\n');
}

export function writeResults(path: string, figures: readonly Figure[], m: Machine, startedAt: Date): void {
  const out = { startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), machine: m, figures };
  writeFileSync(path, `${JSON.stringify(out, null, 2)}\n`);
}

/** The figures of an earlier results.json, or none. */
export function readResults(path: string): Figure[] {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { figures: Figure[] }).figures;
  } catch {
    return [];
  }
}

/** Peak RSS of this process so far, in MB (the kernel's high-water mark). */
export const peakRssMb = (): number => Math.round(process.resourceUsage().maxRSS / 1024);
