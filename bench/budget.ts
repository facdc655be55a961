// The key's request budget, time compressed 10x (10 requests per 1 s at the cloud and in the
// daemon, reconcile 60 s, ticks every 3 s): cold start, steady reads, one boundary with leadTime auto.
import { inFreshProcess } from './child.js';
import type { BudgetOptions, BudgetRun } from './daemon-budget.js';
import type { Figure } from './stats.js';

const scenario = 'budget';
const RATE = 10;
const SHARE = 0.25;
const TICK_S = 3;

export async function budget(o: BudgetOptions): Promise<Figure[]> {
  const r = await inFreshProcess<BudgetRun>(new URL('./daemon-budget.ts', import.meta.url).href, o, 3 * 3_600_000);
  const n = o.pipes;
  const ideal = (n / RATE) * 1000;
  const coldRatio = r.coldMs / ideal;
  const readShare = r.steadyReads / ((r.steadyMs / 1000) * RATE);
  const half = n / 2;
  const downBoundMs = 1.2 * (half / ((1 - SHARE) * RATE)) * 1000;
  const gap = r.steadyMaxGapMs / r.steadyPeriodMs;
  // a read comes due at a tick: one tick of the cron on top of the period
  const gapGoal = 1 + (TICK_S * 1000) / r.steadyPeriodMs;
  const note =
    '10 req/s per key at the cloud and in the daemon (10x compressed), reconcile 60 s, ticks every 3 s, readShare 0.25';
  const f = (metric: string, value: number, unit: string, goal?: string, pass?: boolean, extra?: string): Figure => ({
    scenario,
    metric,
    value: Math.round(value * 1000) / 1000,
    unit,
    n,
    runs: [value],
    ...(goal !== undefined ? { goal, pass: pass ?? false } : {}),
    ...(extra ? { note: extra } : {}),
  });
  const restartRatio = r.restartMs / ideal;
  const cold = [
    // First deploy, empty Redis: every pipe is read before its first change (its state unknown).
    f('first deploy: time to all at target / (N / rate)', coldRatio, 'ratio', '<= 2.1', coldRatio <= 2.1, note),
    // A change and the read of the pipe before it; the reconcile reads of pipes already at target
    // (the read share's, taken while no change waited) are reported apart, not charged to a change.
    f(
      'first deploy: requests per changed pipe',
      (r.coldChanges + r.coldContactReads) / n,
      'requests',
      '2 (a read, then the change)',
      r.coldChanges === n && r.coldContactReads === n,
      `${r.coldChanges} changes, ${r.coldContactReads} reads before a pipe's change; besides: ${r.coldReconcileReads} reconcile reads of pipes already at target, ` +
        `${r.coldListReads} services-list GETs (${r.coldRequests} PATCHes at the cloud); ${r.coldIdleSeconds} s of ${Math.ceil(r.coldMs / 1000)} without an answer`,
    ),
    f('first deploy: 429s at the cloud', r.cold429, '429', '0', r.cold429 === 0),
    // Restart with Redis intact: what the daemon knew is still there, so no read before a change.
    f(
      'restart, Redis intact: time to all at target / (N / rate)',
      restartRatio,
      'ratio',
      '<= 1.1',
      restartRatio <= 1.1,
      note,
    ),
    f(
      'restart, Redis intact: reads before a change',
      r.restartReadsBeforeChange,
      'reads',
      '0',
      r.restartReadsBeforeChange === 0,
      `${r.restartChanges} changes`,
    ),
    f('restart, Redis intact: 429s at the cloud', r.restart429, '429', '0', r.restart429 === 0),
  ];
  if (o.coldOnly) return cold;
  return [
    ...cold,
    f(
      'steady: reads / key budget',
      readShare,
      'share',
      `<= ${SHARE + 0.02}`,
      readShare <= SHARE + 0.02,
      `${Math.round(r.steadyMs / 1000)} s`,
    ),
    f(
      'steady: longest a pipe went unread / effective reconcile period',
      gap,
      'ratio',
      `<= ${gapGoal.toFixed(3)} (one tick)`,
      gap <= gapGoal,
      `period ${r.steadyPeriodMs / 1000} s (N / (readShare x rate)); every pipe read at least ${r.steadyMinReads} times; ` +
        `each one's first read came within ${(r.steadyFirstReadMs / 1000).toFixed(0)} s of the phase's start`,
    ),
    f('steady: 429s at the cloud', r.steady429, '429', '0', r.steady429 === 0),
    f(
      'boundary: scale-ups at target at T (leadTime auto)',
      r.upsAtT / half,
      'share',
      '1',
      r.upsAtT === half,
      `the key's plan starts them ${(r.planLeadMs / 1000).toFixed(1)} s before T; first answered ${(r.firstUpBeforeTMs / 1000).toFixed(1)} s, last ${(-r.upsDoneMs / 1000).toFixed(1)} s before T`,
    ),
    f(
      'boundary: scale-downs all applied after T',
      r.downsDoneMs,
      'ms',
      `<= ${Math.round(downBoundMs)}`,
      r.downsDoneMs <= downBoundMs && r.downsBeforeT === 0,
      `1.2 x ${half} / ((1 - readShare) x rate); ${r.downsBeforeT} before T`,
    ),
    f('boundary: 429s at the cloud', r.boundary429, '429', '0', r.boundary429 === 0),
    f(
      'boundary: requests / changes',
      r.boundaryRequests / n,
      'ratio',
      undefined,
      undefined,
      'reads may take their share while no change waits',
    ),
  ];
}
