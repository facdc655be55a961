// `simulate --html` and `diff --html`: one self-contained HTML file (inline SVG, inline CSS and a
// few lines of script; nothing from the network) with a step chart per pipe and scaling field
// (html-chart.ts), which reads without hovering: value ticks, the time zone, windows, ranges and
// bounds, and a skipped pipe's reason are written on it; a hover adds a change's instant and
// reasons. For diff, the base is drawn dashed under the head, under the capacity each config runs
// (the table the text output starts with) and each pipe's capacity line. The page shell, its
// tables and escaping are every report's: `plan --html` (plan-report.ts) is built of them too.
import { KIND_FIELDS, type ScalingField } from '../api/index.js';
import {
  pipeTimeline,
  count,
  type ConfigDiff,
  type DiffSide,
  type SimulatedChange,
  type PipeView,
  type PipeTimeline,
  type PlanEntry,
  type MetricAt,
  type PipeConfig,
  peakBetween,
  metricField,
} from '../policy/index.js';
import type { Config } from '../config/index.js';
import { chart, escapeHtml, skippedFigure, type ChartPipe, type MetricLines } from './html-chart.js';

export { escapeHtml };

export interface ReportPipe extends ChartPipe {
  /** Why the pipe has no chart, or what else to say about it. */
  readonly note?: string;
  /** diff: the capacity line of the pipe, as the text output has it. */
  readonly capacity?: string;
}

/** A row of diff's capacity table: unit, base, head, delta, as the text output prints them. */
export type CapacityRow = readonly [unit: string, base: string, head: string, delta: string];

export interface Report {
  readonly title: string;
  readonly subtitle: string;
  readonly from: number;
  readonly to: number;
  readonly pipes: readonly ReportPipe[];
  /** diff: the capacity each config runs over the period. */
  readonly capacity?: readonly CapacityRow[];
}

/** Why each pipe that changes nothing over the period is skipped (its decision at the start), as
 *  `simulate`'s text says it: "pipe_state: pipe is Stopped: ...". */
export function skipReasons(
  atStart: readonly PlanEntry[],
  changes: readonly SimulatedChange[],
): Record<string, string> {
  const changed = new Set(changes.map((c) => c.pipe));
  const out: Record<string, string> = {};
  for (const e of atStart) {
    // a database pipe is no skip but is never scaled either: its reason is 'kind'
    const skipped = e.decision.action === 'skip' || e.decision.reasons.some((r) => r.code === 'kind');
    const reason = skipped ? e.decision.reasons.at(-1) : undefined;
    if (reason && !changed.has(e.pipe.name)) out[e.pipe.name] = `${reason.code}: ${reason.message}`;
  }
  return out;
}

const STYLE = `
body{font:14px system-ui,sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 6px}.sub,.note{color:#5a6270}
figure{margin:6px 0}figcaption{font-size:13px;color:#394150;margin-bottom:2px}
svg{background:#fafbfc;border:1px solid #e3e6ea}
.window{fill:#dbe9ff;opacity:.7}.window-name{font-size:10px;fill:#2f5da8}
.range{stroke:#9aa3ad;stroke-dasharray:2 3}.range-label{font-size:10px;fill:#7b838d}
.bound{stroke:#d9822b;stroke-dasharray:6 3}.bound-label{font-size:10px;fill:#b5671c}
.metric-band{fill:#2e9d5b;opacity:.18}.freeze{fill:#c0392b;opacity:.12}
path.load-actual{fill:none;stroke:#2e9d5b;stroke-width:1}path.load-forecast{fill:none;stroke:#8e44ad;stroke-width:1.5;stroke-dasharray:4 3}
.tick{font-size:10px;fill:#5a6270}.grid{stroke:#e6e9ee}.axis-zone{font-size:10px;fill:#394150;font-style:italic}
.skipped{fill:#c9ced6;opacity:.45}.skipped-label{font-size:13px;fill:#394150;font-weight:600}
table.report{border-collapse:collapse;margin:8px 0 4px}table.report td,table.report th{padding:2px 10px;text-align:left;font-variant-numeric:tabular-nums}
table.report .num{text-align:right}table.report thead th{border-bottom:1px solid #c9ced6}table.report th[scope=row]{font-weight:normal;white-space:nowrap}table.report th[scope=rowgroup]{padding-top:8px}
table.report caption{text-align:left;font-size:13px;color:#394150;padding-bottom:2px}table.report tr.total{font-weight:600;border-top:1px solid #e3e6ea}
table.report tr.total th[scope=row],table.report tfoot th[scope=row]{font-weight:600}table.report tfoot tr{border-top:2px solid #c9ced6}
.capacity-line{color:#394150;margin:2px 0}
path.head{fill:none;stroke:#1565c0;stroke-width:2}path.base{fill:none;stroke:#8a8f98;stroke-width:2;stroke-dasharray:5 3}
circle.change{cursor:pointer}circle.head-change{fill:#1565c0}circle.base-change{fill:#8a8f98}
circle.change:hover{r:6}
.legend span{margin-right:16px}.swatch{display:inline-block;width:18px;height:3px;vertical-align:middle;margin-right:4px}
#tip{position:absolute;display:none;max-width:560px;background:#1d2330;color:#fff;padding:6px 8px;border-radius:4px;font-size:12px;pointer-events:none;z-index:2}
`;

const SCRIPT = `
const tip = document.getElementById('tip');
for (const el of document.querySelectorAll('circle.change')) {
  el.addEventListener('mouseenter', () => {
    const r = el.getBoundingClientRect();
    tip.textContent = el.dataset.tip;
    tip.style.left = (r.right + window.scrollX + 6) + 'px';
    tip.style.top = (r.bottom + window.scrollY + 6) + 'px';
    tip.style.display = 'block';
  });
  el.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
}
`;

/** A column of a report's table: its header, and whether its cells are figures (right-aligned). */
export interface Column {
  readonly header: string;
  readonly numeric?: boolean;
}

/** A row of a report's table: its cells as text (the first is the row's header), a class
 *  (`total` for a sum) and data-* attributes that name what it is about. `heads` marks the one
 *  cell that heads the rows under it (a boundary over its slots), across every column. */
export interface Row {
  readonly cells: readonly string[];
  readonly className?: string;
  readonly data?: Readonly<Record<string, string>>;
  readonly heads?: true;
}

const attrs = (row: Row): string =>
  (row.className ? ` class="${escapeHtml(row.className)}"` : '') +
  Object.entries(row.data ?? {})
    .map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`)
    .join('');

function tableRow(columns: readonly Column[], row: Row): string {
  if (row.heads)
    return `<tr${attrs(row)}><th scope="rowgroup" colspan="${columns.length}">${escapeHtml(row.cells[0] ?? '')}</th></tr>`;
  const cells = row.cells.map((text, i) => {
    const cls = columns[i]?.numeric ? ' class="num"' : '';
    return i === 0 ? `<th scope="row"${cls}>${escapeHtml(text)}</th>` : `<td${cls}>${escapeHtml(text)}</td>`;
  });
  return `<tr${attrs(row)}>${cells.join('')}</tr>`;
}

/**
 * One table of a report: column headers (scope col), each row's first cell its header (scope row),
 * every text escaped. `body` is one group of rows or several (a <tbody> each, e.g. one per
 * boundary); `foot` the totals under them.
 */
export function htmlTable(o: {
  readonly className: string;
  readonly columns: readonly Column[];
  readonly body: readonly (readonly Row[])[] | readonly Row[];
  readonly foot?: readonly Row[];
  readonly caption?: string;
  readonly data?: Readonly<Record<string, string>>;
}): string {
  const groups = (o.body.length > 0 && Array.isArray(o.body[0]) ? o.body : [o.body]) as readonly (readonly Row[])[];
  const head = o.columns
    .map((c) => `<th scope="col"${c.numeric ? ' class="num"' : ''}>${escapeHtml(c.header)}</th>`)
    .join('');
  return (
    `<table class="report ${escapeHtml(o.className)}"${attrs({ cells: [], ...(o.data ? { data: o.data } : {}) })}>` +
    (o.caption !== undefined ? `<caption>${escapeHtml(o.caption)}</caption>` : '') +
    `<thead><tr>${head}</tr></thead>` +
    groups.map((rows) => `<tbody>${rows.map((r) => tableRow(o.columns, r)).join('')}</tbody>`).join('') +
    (o.foot && o.foot.length > 0 ? `<tfoot>${o.foot.map((r) => tableRow(o.columns, r)).join('')}</tfoot>` : '') +
    '</table>'
  );
}

function capacityTable(rows: readonly CapacityRow[]): string {
  return htmlTable({
    className: 'capacity',
    caption: 'Capacity each config runs over the period, and what its lead plans spend early and short',
    columns: [
      { header: 'capacity' },
      { header: 'base', numeric: true },
      { header: 'head', numeric: true },
      { header: 'delta', numeric: true },
    ],
    body: rows.map((r) => ({ cells: r })),
  });
}

/**
 * The page every report is (simulate, diff, plan): one self-contained document, nothing from the
 * network, its title and subtitle escaped here; `body` is markup whose text the caller escaped;
 * `script` (the charts' hover) only where there is something to hover.
 */
export function renderPage(o: {
  readonly title: string;
  readonly subtitle: string;
  readonly body: string;
  readonly script?: string;
}): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(o.title)}</title>` +
    `<style>${STYLE}</style></head><body><h1>${escapeHtml(o.title)}</h1><p class="sub">${escapeHtml(o.subtitle)}</p>` +
    `${o.body}${o.script !== undefined ? `<div id="tip"></div><script>${o.script}</script>` : ''}</body></html>\n`
  );
}

export function renderReport(report: Report): string {
  const overlay = report.pipes.some((p) => p.head && p.base);
  const legend = overlay
    ? '<p class="legend"><span><i class="swatch" style="background:#8a8f98"></i>base</span><span><i class="swatch" style="background:#1565c0"></i>head</span>'
    : '<p class="legend"><span><i class="swatch" style="background:#1565c0"></i>scaling</span>';
  const banded = report.pipes.some((p) => (p.head ?? p.base)?.metricBand !== undefined);
  const loaded = report.pipes.some((p) => p.load !== undefined);
  const forecast = report.pipes.some((p) => (p.load?.forecast.length ?? 0) > 0);
  const body: string[] = [];
  for (const pipe of report.pipes) {
    const timeline = pipe.head ?? pipe.base;
    const fields = new Set<ScalingField>([
      ...Object.keys(pipe.base?.series ?? {}),
      ...Object.keys(pipe.head?.series ?? {}),
    ] as ScalingField[]);
    body.push(`<section class="pipe" data-pipe="${escapeHtml(pipe.name)}"><h2>${escapeHtml(pipe.name)}</h2>`);
    if (pipe.note) body.push(`<p class="note">${escapeHtml(pipe.note)}</p>`);
    if (pipe.capacity) body.push(`<p class="capacity-line">${escapeHtml(pipe.capacity)}</p>`);
    if (timeline) for (const field of fields) body.push(chart(report, pipe, timeline, field));
    if (pipe.skipped !== undefined && (!timeline || fields.size === 0)) body.push(skippedFigure(pipe));
    body.push('</section>');
  }
  return renderPage({
    title: report.title,
    subtitle: report.subtitle,
    body:
      `${legend}<span><i class="swatch" style="background:#dbe9ff;height:10px"></i>active window</span>` +
      `<span><i class="swatch" style="background:#d9822b"></i>pipe bounds</span><span><i class="swatch" style="background:#9aa3ad"></i>platform range</span>` +
      (banded
        ? '<span><i class="swatch" style="background:#2e9d5b;opacity:.4;height:10px"></i>metric bounds (metric policies)</span>'
        : '') +
      (loaded
        ? '<span><i class="swatch" style="background:#2e9d5b;height:1px"></i>load / target (what it needs)</span>'
        : '') +
      `${forecast ? '<span><i class="swatch" style="background:#8e44ad"></i>forecast / target</span>' : ''}</p>` +
      `${report.capacity ? capacityTable(report.capacity) : ''}${body.join('\n')}`,
    script: SCRIPT,
  });
}

/** The report of one simulation: a chart per pipe and field, or a note where the pipe is unknown. */
export function simulationReport(
  config: Config,
  views: Readonly<Record<string, PipeView>>,
  notes: Readonly<Record<string, string | undefined>>,
  changes: readonly SimulatedChange[],
  from: number,
  to: number,
  subtitle: string,
  skips: Readonly<Record<string, string>> = {},
  metricAt?: MetricAt,
): Report {
  return {
    title: 'pipescaler simulate',
    subtitle,
    from,
    to,
    pipes: config.pipes.map((pipe) => {
      const view = views[pipe.name];
      const note = notes[pipe.name];
      return {
        name: pipe.name,
        ...(view ? { head: pipeTimeline(config, pipe, view, changes, from, to) } : {}),
        ...(note !== undefined || !view ? { note: note ?? 'pipe unknown: not simulated' } : {}),
        ...(skips[pipe.name] !== undefined ? { skipped: skips[pipe.name] } : {}),
        ...(metricAt && view ? loadLines(config, pipe, view, metricAt, from, to) : {}),
      };
    }),
  };
}

/** Most points a load or forecast line has: a chart is 960 px wide. */
const LINE_POINTS = 600;

/** A metric pipe's recorded load and the forecast the daemon would have had, in units of its field. */
function loadLines(
  config: Config,
  pipe: PipeConfig,
  view: PipeView,
  metricAt: MetricAt,
  from: number,
  to: number,
): { load: MetricLines } | Record<string, never> {
  const policy = config.policies[pipe.policy];
  const spec = policy?.metric;
  const field = spec && view.kind !== null ? metricField(spec, KIND_FIELDS[view.kind]) : null;
  const per = field === null ? undefined : spec?.targetPer[field];
  if (!policy || field === null || per === undefined) return {};
  const actual: [number, number][] = [];
  const forecast: [number, number][] = [];
  const step = Math.max(60_000, Math.ceil((to - from) / LINE_POINTS / 60_000) * 60_000);
  for (let t = from; t < to; t += step) {
    const r = metricAt(pipe, policy, t);
    if (r === undefined || 'error' in r) continue;
    actual.push([t, r.value / per]);
    const f = r.forecast;
    const predicted = f && !('error' in f) ? peakBetween(f.points, t, t) : null;
    if (predicted !== null) forecast.push([t, predicted / per]);
  }
  return { load: { field, actual, forecast } };
}

/** The report of a diff: every pipe of either side, base dashed under head. */
export function diffReport(
  base: DiffSide,
  head: DiffSide,
  diff: ConfigDiff,
  subtitle: string,
  capacity: { readonly total: readonly CapacityRow[]; readonly line: (pipe: string) => string | undefined },
  skips: Readonly<Record<string, string>> = {},
): Report {
  const timeline = (side: DiffSide, name: string | undefined): PipeTimeline | undefined => {
    const pipe = side.config.pipes.find((p) => p.name === name);
    const view = name === undefined ? undefined : side.views[name];
    return pipe && view ? pipeTimeline(side.config, pipe, view, side.changes, diff.from, diff.to) : undefined;
  };
  return {
    title: 'pipescaler diff',
    subtitle,
    from: diff.from,
    to: diff.to,
    capacity: capacity.total,
    pipes: diff.pipes.map((d) => {
      const b = timeline(base, d.status === 'added' ? undefined : (d.renamedFrom ?? d.pipe));
      const h = timeline(head, d.status === 'removed' ? undefined : d.pipe);
      const note =
        d.status === 'same'
          ? 'same in both'
          : d.status === 'renamed'
            ? `renamed from ${d.renamedFrom ?? '?'}`
            : d.status === 'changed'
              ? `${count(d.changes.length, 'change')} differ${d.changes.length === 1 ? 's' : ''}`
              : d.status;
      return {
        name: d.pipe,
        ...(b ? { base: b } : {}),
        ...(h ? { head: h } : {}),
        note: d.simulated ? note : `${note}; pipe unknown: not simulated`,
        ...(capacity.line(d.pipe) !== undefined ? { capacity: capacity.line(d.pipe) } : {}),
        ...(skips[d.pipe] !== undefined ? { skipped: skips[d.pipe] } : {}),
      };
    }),
  };
}
