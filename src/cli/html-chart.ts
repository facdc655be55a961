// One chart of the HTML report (html-report.ts): a pipe's scaling field over the period as an
// inline SVG step chart that reads without hovering. Value ticks and grid lines on the y-axis, the
// time axis in one time zone per pipe (named under it, with its UTC offset), active windows shaded
// and named, the platform's range and the pipe's bounds, a metric policy's band, a skipped pipe
// greyed with its reason written across; each change is a marker whose hover adds its instant and
// reasons.
import { DateTime } from 'luxon';
import { SCALING_LIMITS, type ScalingField } from '../api/index.js';
import type { SimulatedChange, PipeTimeline } from '../policy/index.js';

/** What a chart needs of its pipe (html-report.ts' ReportPipe). */
export interface ChartPipe {
  readonly name: string;
  readonly head?: PipeTimeline;
  readonly base?: PipeTimeline;
  /** Why the daemon skips the pipe (reason code and text), drawn across its charts. */
  readonly skipped?: string;
  /** simulate --metrics: the recorded load and its forecast, in units of the field (value / target). */
  readonly load?: MetricLines;
}

/** A metric pipe's load and forecast over the period as (epoch ms, units of `field`) points. */
export interface MetricLines {
  readonly field: ScalingField;
  readonly actual: readonly (readonly [number, number])[];
  readonly forecast: readonly (readonly [number, number])[];
}

export const W = 960;
const H = 206;
const M = { left: 56, right: 12, top: 22, bottom: 42 };
const PLOT_H = H - M.top - M.bottom;
/** The least room between two value ticks' labels (px). */
const TICK_ROOM = 12;
const LABEL: Record<ScalingField, string> = {
  replicas: 'replicas',
  concurrency: 'concurrency',
  replicaCpuMillicores: 'CPU per replica (millicores)',
  replicaMemoryGb: 'memory per replica (GB)',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const fmt = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(2).replace(/0+$/, ''));

function instantText(ms: number, zone: string): string {
  const utc = `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  if (zone === 'UTC') return utc;
  return `${utc} / ${DateTime.fromMillis(ms, { zone }).toFormat('ccc yyyy-MM-dd HH:mm')} ${zone}`;
}

/** "times in Europe/Berlin (UTC+01:00)", or "(UTC+01:00, then +02:00)" across a DST change. */
export function zoneLabel(zone: string, from: number, to: number): string {
  if (zone === 'UTC') return 'times in UTC';
  const at = (ms: number) => DateTime.fromMillis(ms, { zone }).toFormat('ZZ');
  const [start, end] = [at(from), at(to - 1)];
  return `times in ${zone} (UTC${start}${end === start ? '' : `, then ${end}`})`;
}

/** The y-axis' labelled values: the range's ends and round steps between them (about five),
 *  none closer than TICK_ROOM pixels to an end. */
export function valueTicks(min: number, max: number, pxPerUnit: number): number[] {
  const rough = (max - min) / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rough) ?? rough;
  const ticks = [min];
  for (let v = Math.ceil(min / step) * step; v < max; v += step) {
    const value = Number(v.toPrecision(12));
    if ((value - min) * pxPerUnit >= TICK_ROOM && (max - value) * pxPerUnit >= TICK_ROOM) ticks.push(value);
  }
  ticks.push(max);
  return ticks;
}

function tipOf(side: string, field: ScalingField, c: SimulatedChange, value: number, zone: string): string {
  const was = c.previous[field];
  const reasons = c.reasons.map((r) => `${r.code}: ${r.message}`).join('; ');
  const windows = c.windows.length > 0 ? c.windows.join(' + ') : 'baseline';
  // a scale-up sent early (lead time) names the boundary it is ready for
  const ahead = c.lead
    ? `, ahead of ${c.lead.windows.length > 0 ? c.lead.windows.join(' + ') : 'the baseline'} at ${instantText(c.lead.boundary, zone)}`
    : '';
  const held = c.held ? `, held by freeze ${c.held.freezes.join(' + ')} since ${instantText(c.held.since, zone)}` : '';
  const override = c.override ? `, override: ${c.override.reason}` : '';
  return (
    `${side}${instantText(c.at, zone)} | ${c.direction} ${field} ${was === undefined ? '?' : fmt(was)} -> ${fmt(value)} ` +
    `[${windows}${ahead}${held}${override}]${reasons ? ` | ${reasons}` : ''}`
  );
}

/** A pipe with no field to chart (a database pipe) that is skipped: its reason in a box of its own. */
export function skippedFigure(pipe: ChartPipe): string {
  const h = 48;
  return (
    `<figure class="skipped-pipe" data-pipe="${escapeHtml(pipe.name)}" data-field="none">` +
    `<figcaption>${escapeHtml(pipe.name)}: not scaled</figcaption>` +
    `<svg viewBox="0 0 ${W} ${h}" width="${W}" height="${h}" role="img"><rect class="skipped" x="0" y="0" width="${W}" height="${h}"/>` +
    `<text class="skipped-label" x="${W / 2}" y="${h / 2 + 4}" text-anchor="middle">skipped: ${escapeHtml(pipe.skipped ?? '')}</text></svg></figure>`
  );
}

/** `timeline`: the pipe's head, else its base; its zone is the one every part of the chart uses. */
export function chart(
  period: { readonly from: number; readonly to: number },
  pipe: ChartPipe,
  timeline: PipeTimeline,
  field: ScalingField,
): string {
  const limits = SCALING_LIMITS[field];
  const bounds = timeline.pipe.bounds[field];
  const zone = timeline.zone;
  const x = (t: number): number => M.left + ((t - period.from) / (period.to - period.from)) * (W - M.left - M.right);
  const pxPerUnit = PLOT_H / (limits.max - limits.min);
  const y = (v: number): number => H - M.bottom - (v - limits.min) * pxPerUnit;
  const parts: string[] = [];

  // grid and value ticks first, under everything
  for (const v of valueTicks(limits.min, limits.max, pxPerUnit)) {
    const at = y(v).toFixed(1);
    parts.push(
      `<line class="grid" x1="${M.left}" x2="${W - M.right}" y1="${at}" y2="${at}"/>`,
      `<text class="tick ytick" x="${M.left - 6}" y="${(y(v) + 3.5).toFixed(1)}" text-anchor="end">${fmt(v)}</text>`,
    );
  }
  for (const span of timeline.windows) {
    const x0 = x(span.from);
    const width = Math.max(1, x(span.to) - x0);
    parts.push(
      `<rect class="window" x="${x0.toFixed(1)}" y="${M.top}" width="${width.toFixed(1)}" height="${PLOT_H}"><title>${escapeHtml(span.names.join(' + '))}</title></rect>`,
    );
    if (width > 40)
      parts.push(
        `<text class="window-name" x="${(x0 + 3).toFixed(1)}" y="${M.top + 11}">${escapeHtml(span.names[0] ?? '')}</text>`,
      );
  }
  // Freezes: shaded, named in their title (what they held shows on the change they let out).
  for (const span of timeline.freezes) {
    const x0 = x(span.from);
    parts.push(
      `<rect class="freeze" x="${x0.toFixed(1)}" y="${M.top}" width="${Math.max(1, x(span.to) - x0).toFixed(1)}" height="${PLOT_H}"><title>freeze ${escapeHtml(span.names.join(' + '))}</title></rect>`,
    );
  }
  // A metric policy's band: the window's or baseline's bounds its metric moves this field within.
  const band = timeline.metricBand?.field === field ? timeline.metricBand.spans : [];
  for (const span of band) {
    const x0 = x(span.from);
    const top = y(Math.min(span.max, limits.max));
    const height = Math.max(2, y(Math.max(span.min, limits.min)) - top);
    const title = `metric bounds ${fmt(span.min)}..${fmt(span.max)} (${span.windows.length > 0 ? span.windows.join(' + ') : 'baseline'})`;
    parts.push(
      `<rect class="metric-band" x="${x0.toFixed(1)}" y="${(height === 2 ? top - 1 : top).toFixed(1)}" width="${Math.max(1, x(span.to) - x0).toFixed(1)}" height="${height.toFixed(1)}" ` +
        `data-min="${span.min}" data-max="${span.max}"><title>${escapeHtml(title)}</title></rect>`,
    );
  }
  // simulate --metrics: the load (what it needs at target) and the forecast over the capacity line
  const line = (points: readonly (readonly [number, number])[], cls: string): void => {
    if (points.length < 2) return;
    const clampY = (v: number): string => y(Math.min(limits.max, Math.max(limits.min, v))).toFixed(1);
    parts.push(
      `<path class="${cls}" d="${points.map(([t, v], i) => `${i === 0 ? 'M' : 'L'}${x(t).toFixed(1)},${clampY(v)}`).join(' ')}"/>`,
    );
  };
  if (pipe.load?.field === field) {
    line(pipe.load.actual, 'load-actual');
    line(pipe.load.forecast, 'load-forecast');
  }
  const hline = (v: number, cls: string, label: string): void => {
    parts.push(
      `<line class="${cls}" x1="${M.left}" x2="${W - M.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"/>`,
      `<text class="${cls}-label" x="${W - M.right - 4}" y="${(y(v) - 3).toFixed(1)}" text-anchor="end">${escapeHtml(label)}</text>`,
    );
  };
  hline(limits.min, 'range', `platform min ${fmt(limits.min)}`);
  hline(limits.max, 'range', `platform max ${fmt(limits.max)}`);
  if (bounds?.min !== undefined) hline(bounds.min, 'bound', `pipe min ${fmt(bounds.min)}`);
  if (bounds?.max !== undefined) hline(bounds.max, 'bound', `pipe max ${fmt(bounds.max)}`);

  const ticks = 6;
  for (let i = 0; i <= ticks; i++) {
    const t = period.from + ((period.to - period.from) * i) / ticks;
    const label = DateTime.fromMillis(t, { zone }).toFormat('ccc dd LLL HH:mm');
    // the last label ends at the axis' end instead of running past the chart
    const anchor = i === ticks ? 'end' : 'middle';
    parts.push(`<text class="tick xtick" x="${x(t).toFixed(1)}" y="${H - 24}" text-anchor="${anchor}">${label}</text>`);
  }
  parts.push(
    `<text class="axis-zone" x="${((M.left + W - M.right) / 2).toFixed(1)}" y="${H - 6}" text-anchor="middle">${escapeHtml(zoneLabel(zone, period.from, period.to))}</text>`,
  );

  const draw = (t: PipeTimeline | undefined, cls: 'base' | 'head', side: string): void => {
    const points = t?.series[field];
    const [first, ...rest] = points ?? [];
    if (!t || !points || !first) return;
    let d = `M${x(first.at).toFixed(1)},${y(first.value).toFixed(1)}`;
    for (const p of rest) d += ` H${x(p.at).toFixed(1)} V${y(p.value).toFixed(1)}`;
    d += ` H${x(period.to).toFixed(1)}`;
    parts.push(`<path class="${cls}" d="${d}"/>`);
    for (const p of points) {
      if (!p.change) continue;
      // the pipe's one zone, base and head alike: a chart never mixes two clocks
      const tip = tipOf(side, field, p.change, p.value, zone);
      parts.push(
        `<circle class="change ${cls}-change" cx="${x(p.at).toFixed(1)}" cy="${y(p.value).toFixed(1)}" r="4" data-tip="${escapeHtml(tip)}"><title>${escapeHtml(tip)}</title></circle>`,
      );
    }
  };
  if (pipe.head && pipe.base) {
    draw(pipe.base, 'base', 'base: ');
    draw(pipe.head, 'head', 'head: ');
  } else {
    draw(timeline, 'head', '');
  }
  if (pipe.skipped !== undefined)
    parts.push(
      `<rect class="skipped" x="${M.left}" y="${M.top}" width="${W - M.left - M.right}" height="${PLOT_H}"/>`,
      `<text class="skipped-label" x="${((M.left + W - M.right) / 2).toFixed(1)}" y="${(M.top + PLOT_H / 2).toFixed(1)}" text-anchor="middle">skipped: ${escapeHtml(pipe.skipped)}</text>`,
    );
  return (
    `<figure class="chart" data-pipe="${escapeHtml(pipe.name)}" data-field="${field}">` +
    `<figcaption>${escapeHtml(pipe.name)}: ${LABEL[field]}</figcaption>` +
    `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img">${parts.join('')}</svg></figure>`
  );
}
