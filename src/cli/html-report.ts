// `simulate --html` and `diff --html`: one self-contained HTML file (inline SVG, inline CSS and a
// few lines of script; nothing from the network) with a step chart per pipe and scaling field:
// active windows shaded and named, the platform's range and the pipe's bounds drawn, the band a
// metric policy's metric moves its field within, and a marker per change whose hover shows the
// instant in UTC and in the windows' time zone, and the reasons. For diff, the base is drawn
// dashed under the head.
import { DateTime } from 'luxon';
import { SCALING_LIMITS, type ScalingField } from '../api/index.js';
import {
  pipeTimeline,
  count,
  type ConfigDiff,
  type DiffSide,
  type SimulatedChange,
  type PipeTimeline,
  type Config,
  type PipeView,
} from '../policy/index.js';

export interface ReportPipe {
  readonly name: string;
  readonly head?: PipeTimeline;
  readonly base?: PipeTimeline;
  /** Why the pipe has no chart, or what else to say about it. */
  readonly note?: string;
}

export interface Report {
  readonly title: string;
  readonly subtitle: string;
  readonly from: number;
  readonly to: number;
  readonly pipes: readonly ReportPipe[];
}

const W = 960;
const H = 190;
const M = { left: 56, right: 12, top: 22, bottom: 26 };
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

function tipOf(side: string, field: ScalingField, c: SimulatedChange, value: number, zone: string): string {
  const was = c.previous[field];
  const reasons = c.reasons.map((r) => `${r.code}: ${r.message}`).join('; ');
  const windows = c.windows.length > 0 ? c.windows.join(' + ') : 'baseline';
  // a scale-up sent early (lead time) names the boundary it is ready for
  const ahead = c.lead
    ? `, ahead of ${c.lead.windows.length > 0 ? c.lead.windows.join(' + ') : 'the baseline'} at ${instantText(c.lead.boundary, zone)}`
    : '';
  return (
    `${side}${instantText(c.at, zone)} | ${c.direction} ${field} ${was === undefined ? '?' : fmt(was)} -> ${fmt(value)} ` +
    `[${windows}${ahead}]${reasons ? ` | ${reasons}` : ''}`
  );
}

/** `timeline`: the pipe's head, else its base. */
function chart(report: Report, pipe: ReportPipe, timeline: PipeTimeline, field: ScalingField): string {
  const limits = SCALING_LIMITS[field];
  const bounds = timeline.pipe.bounds[field];
  const x = (t: number): number => M.left + ((t - report.from) / (report.to - report.from)) * (W - M.left - M.right);
  const y = (v: number): number =>
    H - M.bottom - ((v - limits.min) / (limits.max - limits.min)) * (H - M.top - M.bottom);
  const parts: string[] = [];

  for (const span of timeline.windows) {
    const x0 = x(span.from);
    const width = Math.max(1, x(span.to) - x0);
    parts.push(
      `<rect class="window" x="${x0.toFixed(1)}" y="${M.top}" width="${width.toFixed(1)}" height="${H - M.top - M.bottom}"><title>${escapeHtml(span.names.join(' + '))}</title></rect>`,
    );
    if (width > 40)
      parts.push(
        `<text class="window-name" x="${(x0 + 3).toFixed(1)}" y="${M.top + 11}">${escapeHtml(span.names[0] ?? '')}</text>`,
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
    const t = report.from + ((report.to - report.from) * i) / ticks;
    const label = DateTime.fromMillis(t, { zone: timeline.zone }).toFormat('ccc dd LLL HH:mm');
    parts.push(`<text class="tick" x="${x(t).toFixed(1)}" y="${H - 8}" text-anchor="middle">${label}</text>`);
  }
  parts.push(
    `<text class="tick" x="${M.left - 6}" y="${(y(limits.max) + 4).toFixed(1)}" text-anchor="end">${fmt(limits.max)}</text>`,
    `<text class="tick" x="${M.left - 6}" y="${(y(limits.min) + 4).toFixed(1)}" text-anchor="end">${fmt(limits.min)}</text>`,
  );

  const draw = (t: PipeTimeline | undefined, cls: 'base' | 'head', side: string): void => {
    const points = t?.series[field];
    const [first, ...rest] = points ?? [];
    if (!t || !points || !first) return;
    let d = `M${x(first.at).toFixed(1)},${y(first.value).toFixed(1)}`;
    for (const p of rest) d += ` H${x(p.at).toFixed(1)} V${y(p.value).toFixed(1)}`;
    d += ` H${x(report.to).toFixed(1)}`;
    parts.push(`<path class="${cls}" d="${d}"/>`);
    for (const p of points) {
      if (!p.change) continue;
      const tip = tipOf(side, field, p.change, p.value, t.zone);
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
  return (
    `<figure class="chart" data-pipe="${escapeHtml(pipe.name)}" data-field="${field}">` +
    `<figcaption>${escapeHtml(pipe.name)}: ${LABEL[field]}</figcaption>` +
    `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img">${parts.join('')}</svg></figure>`
  );
}

const STYLE = `
body{font:14px system-ui,sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 6px}.sub,.note{color:#5a6270}
figure{margin:6px 0}figcaption{font-size:13px;color:#394150;margin-bottom:2px}
svg{background:#fafbfc;border:1px solid #e3e6ea}
.window{fill:#dbe9ff;opacity:.7}.window-name{font-size:10px;fill:#2f5da8}
.range{stroke:#9aa3ad;stroke-dasharray:2 3}.range-label{font-size:10px;fill:#7b838d}
.bound{stroke:#d9822b;stroke-dasharray:6 3}.bound-label{font-size:10px;fill:#b5671c}
.metric-band{fill:#2e9d5b;opacity:.18}
.tick{font-size:10px;fill:#5a6270}
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

export function renderReport(report: Report): string {
  const overlay = report.pipes.some((p) => p.head && p.base);
  const legend = overlay
    ? '<p class="legend"><span><i class="swatch" style="background:#8a8f98"></i>base</span><span><i class="swatch" style="background:#1565c0"></i>head</span>'
    : '<p class="legend"><span><i class="swatch" style="background:#1565c0"></i>scaling</span>';
  const banded = report.pipes.some((p) => (p.head ?? p.base)?.metricBand !== undefined);
  const body: string[] = [];
  for (const pipe of report.pipes) {
    const timeline = pipe.head ?? pipe.base;
    const fields = new Set<ScalingField>([
      ...Object.keys(pipe.base?.series ?? {}),
      ...Object.keys(pipe.head?.series ?? {}),
    ] as ScalingField[]);
    body.push(`<section class="pipe" data-pipe="${escapeHtml(pipe.name)}"><h2>${escapeHtml(pipe.name)}</h2>`);
    if (pipe.note) body.push(`<p class="note">${escapeHtml(pipe.note)}</p>`);
    if (timeline) for (const field of fields) body.push(chart(report, pipe, timeline, field));
    body.push('</section>');
  }
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(report.title)}</title>` +
    `<style>${STYLE}</style></head><body><h1>${escapeHtml(report.title)}</h1><p class="sub">${escapeHtml(report.subtitle)}</p>` +
    `${legend}<span><i class="swatch" style="background:#dbe9ff;height:10px"></i>active window</span>` +
    `<span><i class="swatch" style="background:#d9822b"></i>pipe bounds</span><span><i class="swatch" style="background:#9aa3ad"></i>platform range</span>` +
    `${banded ? '<span><i class="swatch" style="background:#2e9d5b;opacity:.4;height:10px"></i>metric bounds (metric policies)</span>' : ''}</p>` +
    `${body.join('\n')}<div id="tip"></div><script>${SCRIPT}</script></body></html>\n`
  );
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
      };
    }),
  };
}

/** The report of a diff: every pipe of either side, base dashed under head. */
export function diffReport(base: DiffSide, head: DiffSide, diff: ConfigDiff, subtitle: string): Report {
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
      };
    }),
  };
}
