// Text of `validate`, `plan` and `simulate`: what an operator reads before deploying a policy.
import { DateTime } from 'luxon';
import {
  activeFreezes,
  describeFreeze,
  describeMinutes,
  describeWindow,
  formatDuration,
  isNoMinutes,
  count,
  type PlanEntry,
  type SimulatedChange,
  type LeadOutcome,
  type LeadSlot,
  type PipeConfig,
  type PlannedSlot,
  type PipeView,
} from '../policy/index.js';
import { safeUrl } from '../api/internal.js';
import type { Config } from '../config/index.js';
import type { ActuationEstimate } from '../daemon/index.js';
import { describeActuation, type ActuationOf } from './actuation-text.js';
import type { PipeViews } from './pipe-views.js';
import { describePlanOverride, type PlanOverride } from './stored-overrides.js';
import { formatMoves, formatValues } from './scaling-text.js';

/** Two aligned columns. */
function rows(pairs: readonly (readonly [string, string])[], indent = '  '): string[] {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${indent}${k.padEnd(width)}  ${v}`);
}

/** "batch-1 (pool batch)" for a pipe the pool gave a key, else the key. */
export function keyLabel(p: Pick<PipeConfig, 'key' | 'pool'>): string {
  return p.pool === undefined ? p.key : `${p.key} (pool ${p.pool})`;
}

export function formatValidate(file: string, config: Config): string {
  const pipes = config.pipes.map((p) => {
    const windows = config.policies[p.policy]?.windows.length ?? 0;
    return [p.name, `policy ${p.policy}, key ${keyLabel(p)}, ${count(windows, 'window')}`] as const;
  });
  const header =
    `ok: ${file}: ${count(config.pipes.length, 'pipe')}, ` +
    `${count(Object.keys(config.policies).length, 'policy', 'policies')}, api ${safeUrl(config.api.baseUrl)}${config.dryRun ? ', dryRun' : ''}`;
  return [header, ...(pipes.length > 0 ? rows(pipes) : [])].join('\n');
}

export function formatInstant(ms: number): string {
  const local = DateTime.fromMillis(ms);
  return `${local.toFormat('ccc yyyy-MM-dd HH:mm ZZ')} (${new Date(ms).toISOString().slice(0, 16)}Z)`;
}

/** "07:58:52Z": a lead slot's second. */
export function clockZ(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)}Z`;
}

/** What lead time does for the pipe at this instant: sending ahead now, its next early start and
 *  when it is expected at target (with the actuation counted on), or the fixed lead. */
function leadRow(at: number, entry: PlanEntry, actuationOf: ActuationOf): string | null {
  const { decision, leadSlot } = entry;
  if (decision.lead && decision.direction === 'up') return `sending ahead of ${describeLeadOutcome(decision.lead)}`;
  const lead = entry.policy.behavior.scaleUp.leadTime ?? 'auto';
  if (lead !== 'auto')
    return lead > 0 ? `${formatDuration(lead)}: a scale-up goes that long before its boundary` : null;
  if (!leadSlot) return null;
  const kind = entry.view?.kind ?? entry.pipe.kind ?? null;
  return (
    `auto: the next scale-up may go from ${clockZ(leadSlot.start)}, ${formatDuration(leadSlot.boundary - leadSlot.start)} ` +
    `before the boundary at ${formatInstant(leadSlot.boundary)}${leadSlot.start <= at ? '' : ` (in ${formatDuration(leadSlot.start - at)})`}` +
    `; ${expectedText(leadSlot)} (${describeActuation(leadSlot.actuationMs, actuationOf(entry.pipe), kind)})`
  );
}

/** What the pipe's next lead slot is expected to spend: early when in force (its send plus the
 *  actuation counted on) before its boundary, short when after. */
function capacityRow(entry: PlanEntry): string | null {
  const { leadSlot: slot, leadCapacity: c } = entry;
  if (!slot || !c) return null;
  const inForce = slot.start + slot.actuationMs;
  if (!isNoMinutes(c.short))
    return `${describeMinutes(c.short)} short expected: in force ${formatDuration(inForce - slot.boundary)} after the boundary`;
  return (
    `${describeMinutes(c.early)} early expected: in force ${formatDuration(slot.boundary - inForce)} before the ` +
    'boundary (the send slot plus the actuation counted on)'
  );
}

/** "expected at target by 06:58:02Z, confirmed by 06:58:07Z": with an actuation counted, the plan
 *  reserves the confirmation reads too; without, the slot's end. */
function expectedText(slot: LeadSlot): string {
  return slot.atTargetAt === undefined
    ? `expected at target by ${clockZ(slot.expectedAt)}`
    : `expected at target by ${clockZ(slot.atTargetAt)}, confirmed by ${clockZ(slot.expectedAt)}`;
}

/** "business-hours at 07:00:00Z" */
function describeLeadOutcome(lead: LeadOutcome): string {
  return `${lead.windows.length > 0 ? lead.windows.join('+') : 'the baseline'} at ${clockZ(lead.boundary)}`;
}

/** The policy's freezes in force at `at` and what they hold; the pipe's override (stored or what-if). */
function freezeRows(at: number, entry: PlanEntry, shown: PlanOverride | undefined): (readonly [string, string])[] {
  const { decision } = entry;
  const active = activeFreezes(entry.policy.freezes ?? [], at);
  const rowsOut: (readonly [string, string])[] = [];
  if (active.length > 0) {
    const held = decision.freeze
      ? `; holds ${formatValues(decision.freeze.held)} until ${formatInstant(decision.freeze.until)}`
      : '';
    rowsOut.push(['freezes', `${active.map((a) => describeFreeze(a.freeze)).join('; ')}${held}`]);
  }
  if (shown) {
    const scaleUpOnly = entry.policy.behavior.overrides === 'scaleUpOnly';
    rowsOut.push(['override', describePlanOverride(at, shown, decision.override !== undefined, scaleUpOnly)]);
  }
  return rowsOut;
}

function describeView(view: PipeView | null): string {
  if (view === null) return 'unknown';
  const applied = formatValues(view.applied);
  const endpoints = Object.entries(view.endpoints).map(([id, s]) => `endpoint ${id} ${s}`);
  return [view.kind ?? 'unknown kind', view.state ?? 'unknown state', applied, ...endpoints].join(', ');
}

/** What a plan entry targets at its instant: its recommendation, "-" when skipped. */
export function targetText({ decision }: PlanEntry): string {
  return decision.action === 'skip' ? '-' : formatValues(decision.recommendation);
}

/** What a plan entry sends at its instant: "replicas 4 (up)", "nothing: skipped" or "nothing". */
export function sendText({ decision }: PlanEntry): string {
  return decision.action === 'change'
    ? `${formatValues(decision.changes)} (${decision.direction})`
    : decision.action === 'skip'
      ? 'nothing: skipped'
      : 'nothing';
}

/** `overrides`: each pipe's override, stored or what-if (stored-overrides.ts). */
export function formatPlan(
  at: number,
  entries: readonly PlanEntry[],
  views: PipeViews,
  overrides: Readonly<Record<string, PlanOverride>> = {},
  actuationOf: ActuationOf = () => null,
): string {
  const out = [`plan at ${formatInstant(at)}`];
  for (const entry of entries) {
    const { pipe, view, active, decision } = entry;
    const winners = new Set(decision.windows);
    const lead = leadRow(at, entry, actuationOf);
    const early = capacityRow(entry);
    const windows =
      active.length === 0
        ? 'none: baseline'
        : active.map((w) => `${describeWindow(w)}${winners.has(w.name) ? '' : ' (outranked)'}`).join('; ');
    const note = views[pipe.name]?.note;
    out.push(
      '',
      `${pipe.name}  policy ${pipe.policy}, key ${keyLabel(pipe)}`,
      ...rows([
        ['pipe', describeView(view)],
        ...(note ? [['note', note] as const] : []),
        ['windows', windows],
        ...(lead ? [['lead', lead] as const] : []),
        ...(early ? [['early', early] as const] : []),
        ...freezeRows(at, entry, overrides[pipe.name]),
        ['target', targetText(entry)],
        ['send', sendText(entry)],
        ...decision.reasons.map((r, i) => [i === 0 ? 'why' : '', `${r.code}: ${r.message}`] as const),
      ]),
    );
  }
  return out.join('\n');
}

/**
 * `atStart` is plan() at the start of the period: a pipe that never changes says why (skipped,
 * database pipe...) from its first decision. A pipe with scale-ups says which actuation their
 * expected-at-target instants (and its lead plan) count on, and where it comes from.
 */
export function formatSimulation(
  config: Config,
  from: number,
  to: number,
  step: string,
  changes: readonly SimulatedChange[],
  views: PipeViews,
  atStart: readonly PlanEntry[],
  actuationOf: ActuationOf = () => null,
): string {
  const out = [
    `simulate ${new Date(from).toISOString()} .. ${new Date(to).toISOString()}, every ${step}: ` +
      `${count(changes.length, 'change')} = ${count(changes.length, 'scaling API call')}`,
  ];
  out.push(...rateLimitNotes(config, changes));
  for (const pipe of config.pipes) {
    const read = views[pipe.name];
    const mine = changes.filter((c) => c.pipe === pipe.name);
    if (!read?.view) {
      out.push('', `${pipe.name}: not simulated, pipe unknown${read?.note ? ` (${read.note})` : ''}`);
      continue;
    }
    const first = atStart.find((e) => e.pipe.name === pipe.name)?.decision;
    const last = first?.action !== 'change' ? first?.reasons.at(-1) : undefined;
    const why = mine.length === 0 && last ? ` (${last.code}: ${last.message})` : '';
    out.push(
      '',
      `${pipe.name}: ${count(mine.length, 'change')}${why}${read.assumed ? `; ${read.note ?? 'assumed'}` : ''}`,
    );
    const up = mine.find((c) => c.direction === 'up');
    if (up) {
      const kind = read.view.kind ?? pipe.kind ?? null;
      out.push(`  scale-ups count on ${describeActuation(actuationMsOf(up), actuationOf(pipe), kind)}`);
    }
    for (const c of mine) out.push(`  ${changeLine(c)}`);
  }
  return out.join('\n');
}

/** The actuation a simulated scale-up counted on (simulate() gives its expected instant only
 *  when it is above 0). */
function actuationMsOf(c: SimulatedChange): number {
  return c.expectedAt !== undefined ? c.expectedAt - c.at : 0;
}

/** "Mon 2026-11-23 08:00 +01:00 (2026-11-23T07:00Z)  up    replicas 4->6  [business-hours]": one
 *  change as `simulate` lists it and `diff` compares it. */
export function changeLine(c: SimulatedChange): string {
  return `${formatInstant(c.at)}  ${c.direction.padEnd(4)}  ${formatMoves(c.previous, c.scaling)}  [${changeWindows(c)}]`;
}

/** "business-hours", "baseline", or for a scale-up sent early (lead time) "baseline, ahead of
 *  business-hours at 07:00:00Z"; with an expected actuation ", at target by 06:58:30Z"; an
 *  override's or a freeze's part in the change too. */
function changeWindows(c: SimulatedChange): string {
  const windows = c.override
    ? `override until ${clockZ(c.override.until)}: ${c.override.reason}`
    : c.windows.length > 0
      ? c.windows.join('+')
      : 'baseline';
  const lead = c.lead ? `, ahead of ${describeLeadOutcome(c.lead)}` : '';
  const held = c.held ? `, held by freeze ${c.held.freezes.join('+')} since ${clockZ(c.held.since)}` : '';
  const slot = c.slot ? ` (slot from ${clockZ(c.slot.start)})` : '';
  const confirmed = c.slot ? `, confirmed by ${clockZ(c.slot.confirmedBy)}` : '';
  const by = c.expectedAt !== undefined ? `${slot}, at target by ${clockZ(c.expectedAt)}${confirmed}` : '';
  return `${windows}${lead}${held}${by}`;
}

/** A line per API key whose changes would exceed its rate limit in some window. Scale-ups sent
 *  early are left out: the key's lead plan spreads them at its rate. */
function rateLimitNotes(config: Config, changes: readonly SimulatedChange[]): string[] {
  const keyOf = new Map(config.pipes.map((p) => [p.name, p.key]));
  const notes: string[] = [];
  for (const [name, key] of Object.entries(config.api.keys)) {
    const times = changes
      .filter((c) => keyOf.get(c.pipe) === name && !c.lead)
      .map((c) => c.at)
      .sort((a, b) => a - b);
    let peak = 0;
    let j = 0; // the first call within perMs of the i-th (j <= i)
    for (const [i, t] of times.entries()) {
      while (t - (times[j] ?? t) >= key.rateLimit.perMs) j++;
      peak = Math.max(peak, i - j + 1);
    }
    if (peak > key.rateLimit.requests) {
      notes.push(
        `key ${name}: up to ${peak} calls within ${key.rateLimit.perMs / 1000}s, above its limit of ${key.rateLimit.requests}: ` +
          'the daemon queues the rest (scale-ups first), so some land later than shown',
      );
    }
  }
  return notes;
}

/** plan --json: one object per pipe, ending with what `more` adds for its entry. */
export function planJson(
  at: number,
  entries: readonly PlanEntry[],
  views: PipeViews,
  more: (entry: PlanEntry) => object = () => ({}),
  actuationOf: ActuationOf = () => null,
): unknown[] {
  return entries.map((entry) => ({
    ...planEntryJson(at, entry, views, actuationOf),
    ...more(entry),
  }));
}

function planEntryJson(at: number, entry: PlanEntry, views: PipeViews, actuationOf: ActuationOf): object {
  const { pipe, policy, view, active, decision } = entry;
  const [next] = entry.leadSlots;
  const note = views[pipe.name]?.note;
  return {
    pipe: pipe.name,
    at: new Date(at).toISOString(),
    policy: pipe.policy,
    key: pipe.key,
    ...(pipe.pool !== undefined ? { pool: pipe.pool } : {}),
    kind: view?.kind ?? null,
    state: view?.state ?? null,
    applied: view?.applied ?? null,
    ...(note ? { note } : {}),
    activeWindows: active.map((w) => w.name),
    action: decision.action,
    direction: decision.direction,
    windows: decision.windows,
    recommendation: decision.recommendation,
    changes: decision.changes,
    reasons: decision.reasons,
    leadTime: policy.behavior.scaleUp.leadTime ?? 'auto',
    ...(decision.lead
      ? { lead: { boundary: new Date(decision.lead.boundary).toISOString(), windows: decision.lead.windows } }
      : {}),
    ...(decision.freeze
      ? { freeze: { ...decision.freeze, until: new Date(decision.freeze.until).toISOString() } }
      : {}),
    ...(decision.override
      ? { override: { ...decision.override, until: new Date(decision.override.until).toISOString() } }
      : {}),
    ...(next ? { nextLeadSlot: { ...slotJson(next), ...actuationJson(actuationOf(pipe)) } } : {}),
    // every slot of the pipe in the plan in force (nextLeadSlot the first), as `plan --html` shows them
    leadSlots: entry.leadSlots.map(slotJson),
  };
}

/** A lead slot for --json, with the capacity it is expected to spend early and short. */
function slotJson({ slot, capacity }: PlannedSlot): object {
  return {
    start: new Date(slot.start).toISOString(),
    boundary: new Date(slot.boundary).toISOString(),
    expectedAt: new Date(slot.expectedAt).toISOString(),
    ...(slot.atTargetAt !== undefined ? { atTargetAt: new Date(slot.atTargetAt).toISOString() } : {}),
    actuationMs: slot.actuationMs,
    early: capacity.early,
    short: capacity.short,
  };
}

/** simulate --json: one object per change; `assumed` marks the changes of pipes that were not read;
 *  a scale-up names the actuation it counted on and where that comes from. */
export function simulationJson(
  changes: readonly SimulatedChange[],
  views: PipeViews,
  pipes: readonly PipeConfig[],
  actuationOf: ActuationOf,
): unknown[] {
  const byName = new Map(pipes.map((p) => [p.name, p]));
  const actuation = (c: SimulatedChange): object => {
    const pipe = byName.get(c.pipe);
    if (c.direction !== 'up' || !pipe) return {};
    return { actuationMs: actuationMsOf(c), ...actuationJson(actuationOf(pipe)) };
  };
  return changes.map((c) => ({
    pipe: c.pipe,
    ...(views[c.pipe]?.assumed ? { assumed: true } : {}),
    at: new Date(c.at).toISOString(),
    direction: c.direction,
    windows: c.windows,
    scaling: c.scaling,
    previous: c.previous,
    reasons: c.reasons.map((r) => `${r.code}: ${r.message}`),
    ...(c.lead ? { lead: { boundary: new Date(c.lead.boundary).toISOString(), windows: c.lead.windows } } : {}),
    ...(c.expectedAt !== undefined ? { expectedAt: new Date(c.expectedAt).toISOString() } : {}),
    ...actuation(c),
    ...(c.slot
      ? {
          slot: {
            start: new Date(c.slot.start).toISOString(),
            confirmedBy: new Date(c.slot.confirmedBy).toISOString(),
          },
        }
      : {}),
    ...(c.held ? { heldByFreeze: { since: new Date(c.held.since).toISOString(), freezes: c.held.freezes } } : {}),
    ...(c.override ? { override: { reason: c.override.reason, until: new Date(c.override.until).toISOString() } } : {}),
  }));
}

/** Where a lead slot's actuation comes from, for --json: measured p95 (the pipe's or its kind's,
 *  with the samples behind it) or configured; `measuredRead` false when Redis was not read. */
function actuationJson(e: ActuationEstimate | null): object {
  if (e === null) return { actuationSource: 'configured', measuredRead: false };
  return {
    actuationSource: e.source,
    actuationSamples: e.samples,
    ...(e.ms !== undefined ? { measuredP95Ms: e.ms } : {}),
  };
}
