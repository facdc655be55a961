// Scale-ups at target by their boundary when the platform carries a change out 30 s or 3 min after
// answering it (10x compressed: 3 s and 18 s), with the lead plan of the budget alone side by side
// with the plans that count the actuation the daemon measured (its confirmations' p95, from Redis):
// first what the budget-alone boundary measured, then twice what the boundary before with such a
// plan measured. The goals, on the last (the daemon in operation, its estimate settled), are the
// daemon's confirmation by T (its `confirmed` event, the read that showed the target), the plan
// reserving each scale-up's confirming read, and the estimate within 0.8 to 1.2 of the
// propagation; what the cloud holds at T is shown beside it, and the confirmation reads' peak
// against the key's rate.
import { inFreshProcess } from './child.js';
import type { ActuationOptions, ActuationRun, PhaseLead, PhaseRun } from './daemon-actuation.js';
import type { Figure } from './stats.js';

const scenario = 'actuation';
const RATE = 10;
const SHARE = 0.25;
const COMPRESSION = 10;

const LEAD_LABEL: Record<PhaseLead, string> = {
  budget: 'lead from the budget alone',
  first: 'lead counting the actuation measured at the budget-alone boundary',
  second: 'lead counting the actuation measured at the boundary after it',
  measured: 'lead counting the measured actuation',
};

/** What the estimate row of a phase that carries no goal says of it. */
const SETTLING: Record<PhaseLead, string> = {
  budget: '',
  first:
    ": the plan of the budget-alone boundary reserved no confirmation read, so its reads waited behind its changes past the propagation: an estimate of the queue's reads, not of the platform, no goal",
  second:
    ': the boundary before counted an estimate below the propagation, so its reads 15 % apart outnumbered the slots its changes left and waited: the estimate is still rising, no goal',
  measured: '',
};

const platformTime = (ms: number): string => {
  const s = (ms * COMPRESSION) / 1000;
  return s >= 120 ? `${(s / 60).toFixed(1)} min` : `${Math.round(s)} s`;
};

/** Replica-ms (compressed) as replica-minutes on the platform's scale. */
const platformMinutes = (replicaMs: number): string =>
  `${Math.round((replicaMs * COMPRESSION) / 60_000).toLocaleString('en-US')} replica-min`;

export async function actuation(o: ActuationOptions): Promise<Figure[]> {
  // eight boundaries, each after the confirmations of the one before: over an hour at 1,200 pipes
  const r = await inFreshProcess<ActuationRun>(new URL('./daemon-actuation.ts', import.meta.url).href, o, 10_800_000);
  const n = o.pipes;
  const f = (metric: string, value: number, unit: string, goal?: string, pass?: boolean, note?: string): Figure => ({
    scenario,
    metric,
    value: Math.round(value * 1000) / 1000,
    unit,
    n,
    runs: [value],
    ...(goal !== undefined ? { goal, pass: pass ?? false } : {}),
    ...(note ? { note } : {}),
  });
  const figures: Figure[] = [
    f(
      'cold start (no propagation): time to all at target / (N / rate)',
      r.coldMs / ((n / RATE) * 1000),
      'ratio',
      undefined,
      undefined,
      `${r.cold429} 429s; 10 req/s per key at the cloud and in the daemon (10x compressed), reconcile 60 s, ticks every 3 s, readShare 0.25`,
    ),
  ];
  r.phases.forEach((p, i) => figures.push(...phaseFigures(p, r.phases[i - 1], r.firstReadMs, f)));
  return figures;
}

function phaseFigures(
  p: PhaseRun,
  /** The phase before, whose samples the estimate counted. */
  before: PhaseRun | undefined,
  firstReadMs: number,
  f: (metric: string, value: number, unit: string, goal?: string, pass?: boolean, note?: string) => Figure,
): Figure[] {
  const label = `${platformTime(p.propagationMs)} propagation, ${LEAD_LABEL[p.lead]}`;
  const share = p.upsAtT / p.ups;
  const late = [...p.lateMs].sort((a, b) => a - b);
  const lateNote =
    late.length === 0
      ? 'none late'
      : `${late.length} late, by ${platformTime(late[0]!)} to ${platformTime(late.at(-1)!)} (median ${platformTime(late[Math.floor(late.length / 2)]!)}) on the platform's scale`;
  // scale-downs go after T at the rest of the key's rate, then take the propagation
  const downBoundMs = 1.2 * (p.downs / ((1 - SHARE) * RATE)) * 1000 + p.propagationMs;
  // the goal is the daemon's in operation: its plan counting what a boundary with that plan measured
  const counted = p.lead === 'measured';
  const confirmedShare = p.upsConfirmedByT / p.ups;
  // the limit of a boundary's lead: a change and a confirming read per scale-up at 90 % of the
  // key's rate, plus the actuation (the platform's propagation)
  const limitMs = (2 * p.ups * 1000) / (0.9 * RATE) + p.propagationMs;
  const leadRatio = p.planLeadMs / limitMs;
  const estimateRatio = p.expectedActuationMs / p.propagationMs;
  return [
    f(
      `${label}: scale-ups at target at T (read back from the cloud)`,
      share,
      'share',
      undefined,
      undefined,
      `${p.upsAtT} of ${p.ups}; ${lateNote}; waited ${(p.confirmationsWaitMs / 1000).toFixed(1)} s for the phase before's confirmation reads${p.confirmationsOpen > 0 ? ` (${p.confirmationsOpen} pipes still confirming: the wait gave up)` : ''}${p.notReached > 0 ? `; ${p.notReached} pipes not at target 100 min (platform scale) after T` : ''}; the plan starts them ${platformTime(p.planLeadMs)} (${(p.planLeadMs / 1000).toFixed(1)} s) before T${p.snapshotLateMs > 0 ? `; the snapshot for T came ${p.snapshotLateMs} ms late` : ''}`,
    ),
    f(
      `${label}: scale-ups confirmed at target by the daemon by T`,
      confirmedShare,
      'share',
      counted ? '>= 0.99' : undefined,
      counted ? confirmedShare >= 0.99 : undefined,
      `${p.upsConfirmedByT} of ${p.ups} shown at target by the daemon's own read by T; the plan counted on ${platformTime(p.expectedActuationMs)} (${p.expectedActuationMs} ms) of actuation and a confirming read each; ${p.unsettled} changes of unknown outcome, ${p.unconfirmed} unconfirmed (sent again at the limit)`,
    ),
    ...(p.lead === 'budget'
      ? []
      : [
          f(
            `${label}: plan's lead / (2N / (0.9 r) + A)`,
            leadRatio,
            'ratio',
            counted ? '<= 1.15' : undefined,
            counted ? leadRatio <= 1.15 : undefined,
            `${platformTime(p.planLeadMs)} for ${p.ups} scale-ups against ${platformTime(limitMs)} (a change and a confirming read each at 90 % of ${RATE} req/s, plus the ${platformTime(p.propagationMs)} propagation)`,
          ),
          // an estimate below the propagation is as wrong as one above it: the plan's confirming
          // reads come before the target is in force, and the lead is short by the difference. The
          // goal is the daemon's in operation; the budget-alone boundary's plan reserves no read, so
          // its reads wait behind its changes and what they measured is no goal
          f(
            `${label}: actuation estimate / the propagation's p95`,
            estimateRatio,
            'ratio',
            counted ? '0.8 to 1.2' : undefined,
            counted ? estimateRatio >= 0.8 && estimateRatio <= 1.2 : undefined,
            `the plan counted on ${platformTime(p.expectedActuationMs)} (${p.expectedActuationMs} ms), the cloud propagates every change ${platformTime(p.propagationMs)} after its answer; samples: the confirmations of changes not in force at their own answer, each the pair around the propagation (the last read that did not show the target, the first that did) counted at its upper end less the read's wait, the instant that read was due${before ? `; of the ${before.samples} samples of the boundary before, ${before.samplesBracketed} bracketed from below (a read before did not show the target), ${before.samplesWaitedPast} came from a read due before the propagation that went after it (it waited behind the key's other requests, and is sampled at its due instant, below the propagation), ${before.samplesAtFloor} at the firstRead floor (${platformTime(firstReadMs)}); they put the propagation's p95 between ${platformTime(before.bracketLowP95Ms)} (their lower ends, the change's answer when none) and ${platformTime(before.bracketHighP95Ms)} (their reads' own instants)` : ''}${SETTLING[p.lead]}`,
          ),
        ]),
    f(
      `${label}: confirmation reads, most in 10 s / the key's rate`,
      p.confirmReadPeakShare,
      'ratio',
      undefined,
      undefined,
      `${p.confirmReads} reads from a change's send to the read confirming it; they take the slots the changes leave free (no longer the read share of ${SHARE})`,
    ),
    f(
      `${label}: latest scale-up after T`,
      late.length === 0 ? 0 : late.at(-1)!,
      'ms',
      undefined,
      undefined,
      'compressed; 0: all at target by T',
    ),
    f(
      `${label}: capacity spent early / the limit's`,
      p.earlyLimitReplicaMs > 0 ? p.earlyReplicaMs / p.earlyLimitReplicaMs : NaN,
      'ratio',
      counted ? '<= 1.15' : undefined,
      counted ? p.earlyReplicaMs / p.earlyLimitReplicaMs <= 1.15 : undefined,
      `replica-minutes in force before T as the daemon's verdicts count them (from the read that confirmed each scale-up): ${platformMinutes(p.earlyReplicaMs)} on the platform's scale, against ${platformMinutes(p.earlyLimitReplicaMs)} at the budget's limit (the ${p.ups} scale-ups one change and one confirming read each at 0.9 x ${RATE} req/s: the lead 2N / (0.9 r) + A)`,
    ),
    f(`${label}: 429s at the cloud`, p.limited, '429', '0', p.limited === 0),
    f(
      `${label}: scale-downs all at target after T`,
      p.downsDoneMs,
      'ms',
      `<= ${Math.round(downBoundMs)}`,
      p.downsDoneMs <= downBoundMs && p.downsBeforeT === 0,
      `1.2 x ${p.downs} / ((1 - readShare) x rate) + the propagation; ${p.downsBeforeT} before T`,
    ),
    f(
      `${label}: change requests / changes`,
      p.changeRequests / (p.ups + p.downs),
      'ratio',
      undefined,
      undefined,
      `${p.changeRequests} change PATCHes and ${p.reads} reads from the reload to the last pipe at target`,
    ),
  ];
}
