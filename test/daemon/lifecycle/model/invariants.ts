// The invariants the model holds after every command (settle): each change recorded once (its
// outcome, and its audit line by Idempotency-Key), verdicts that agree with the reads (after a
// wipe, and before the pipe's first read), and status stating only what a 200 showed.
import { expect } from 'vitest';
import { accountOf } from '../../../../src/daemon/views/pipe-account.js';
import { drained } from '../../helpers.js';
import { PIPES, stats } from './setup.js';
import { DELIVERY_MS, type Real, type SentChange, type Shown } from './state.js';

/** The instants of the daemon's clock a 200 may be stamped with: the one the proxy handed it over
 *  at, or one a stall moved the clock to while the answer was on its way to the daemon. */
function stampedAt(real: Real, o: Shown, at: number): boolean {
  // a read right after a change within the same instant is stamped a millisecond or two after it
  const near = (t: number) => t <= at && t >= at - 50;
  if (near(o.at)) return true;
  return real.moves.some((m) => m.wall >= o.notedWall && m.wall <= o.handedWall + DELIVERY_MS && near(m.to));
}

type Verdict = Real['verdicts'][number];

/** The pipe's id (lower case, as the proxy keys it) by its config name. */
function idOfPipe(name: string): string {
  return Object.keys(PIPES).find((k) => PIPES[k]!.name === name) ?? '';
}

/** The newest change sent to the pipe named `pipe` whose values `after` includes. */
export function changeOf(real: Real, pipe: string, after: Record<string, unknown> | undefined): SentChange | undefined {
  const id = idOfPipe(pipe);
  for (let i = real.changes.length - 1; i >= 0; i--) {
    const c = real.changes[i]!;
    if (c.id === id && Object.entries(c.values).every(([f, v]) => after?.[f] === v)) return c;
  }
  return undefined;
}

/**
 * Every 200 is recorded exactly once: each change the proxy answered 200 (readable) has one audit
 * line and one outcome (`applied` by its request id, or `landed_late` when a read found it in force
 * first and its 200 came after), unless the daemon gave up on its answer (held through a stall
 * past api.timeout: then its settle read reports it). No change has two outcomes (checked after
 * every command); one each, once the daemon stopped at the run's end (its in-flight turns done).
 */
export function recordedOnce(real: Real, final: boolean): void {
  for (const c of real.changes) {
    if (c.outcomes.length > 1 && c.wiped !== true)
      real.violations.push(`change to ${c.id} ${JSON.stringify(c.values)} reported ${c.outcomes.join(' and ')}`);
    // its answer may still be on its way to a first attempt that no queue counts: at the run's end
    if (!final || c.requestId === undefined || (c.held && c.lost) || c.req.undelivered === true) continue;
    if (c.audits !== 1 || c.outcomes.length < 1 || (c.outcomes.length > 1 && c.wiped !== true))
      real.violations.push(
        `change to ${c.id} answered 200 (${c.requestId}): ${c.audits} audit lines, outcomes [${c.outcomes.join(', ')}]`,
      );
  }
}

/**
 * Every change the cloud answered 200 is recorded once in the audit log, by its Idempotency-Key, as
 * the chaos run counts it (bench/chaos/checks.ts recordedOnce): its 200's `applied` line (not one
 * whose outcome a read reported first), or the read's `landed_late` line when its answer was lost;
 * or, with neither, one `outcome_unknown` line (a read settled it without knowing whether it
 * landed, or it was never shown within 15 min). Never two (checked after every command); one each
 * once the daemon stopped at the run's end, unless Redis lost pipescaler's state after it was sent
 * or its record still holds it unsettled (its settle read still to come).
 */
export async function recordedByKey(real: Real, final: boolean): Promise<void> {
  const owed = new Set<string>();
  if (final)
    for (const pipe of Object.values(PIPES)) {
      const key = (await real.store.read(pipe.name)).unsettled?.key;
      if (key !== undefined) owed.add(key);
    }
  for (const key of real.carriedOut.keys()) {
    const lines = real.recorded.get(key) ?? [];
    const answer = lines.filter((l) => l !== 'outcome_unknown');
    const counted = answer.length > 0 ? answer : lines;
    const sent = real.changes.filter((c) => c.key === key);
    const wiped = sent.some((c) => c.wiped === true);
    const what = () =>
      `change ${key} to ${sent[0]?.id} ${JSON.stringify(sent[0]?.values)} answered 200: audit lines [${lines.join(', ')}]`;
    if (counted.length > 1 && !wiped) real.violations.push(what());
    if (final && counted.length === 0 && !wiped && !owed.has(key)) real.violations.push(what());
  }
}

/**
 * Verdicts after a wipe agree with the reads: a window start within the verdict limit after Redis
 * lost the state is met only when a 200 showed its target (or more) by the boundary, else excluded
 * (state_lost, or the pipe out of the policy's hands); never late or missed.
 */
function verdictAfterWipes(real: Real, v: Verdict): void {
  const limitMs = real.config.evaluate.actuation?.maxMs ?? 600_000;
  const touched = real.wipes.some((w) => w <= v.boundary && v.boundary - w <= limitMs);
  if (!touched) return;
  stats.afterWipe[v.verdict] = (stats.afterWipe[v.verdict] ?? 0) + 1;
  const id = idOfPipe(v.pipe);
  const showed = (real.shown.get(id) ?? []).some(
    // at target as a verdict counts it: each field at or above the window's target
    (o) =>
      o.at <= v.boundary &&
      Object.entries(v.target).every(([f, x]) => typeof o.answered[f] === 'number' && o.answered[f] >= (x as number)),
  );
  const what = `${v.verdict}${v.reason ? ` (${v.reason})` : ''} of ${v.pipe} at ${new Date(v.boundary).toISOString()} after a wipe at ${real.wipes.map((w) => new Date(w).toISOString()).join(', ')}`;
  if (v.verdict === 'late' || v.verdict === 'missed') real.violations.push(`verdict ${what}`);
  if (v.verdict === 'met' && !showed)
    real.violations.push(
      `verdict ${what}: no read showed ${JSON.stringify(v.target)} by then; the last ones showed ${JSON.stringify(
        (real.shown.get(id) ?? [])
          .filter((o) => o.at <= v.boundary)
          .slice(-2)
          .map((o) => [new Date(o.at).toISOString(), o.answered]),
      )}`,
    );
}

/**
 * A window start the pipe's record had not read the pipe by is `excluded`, reason `unseen`, exactly
 * when no read of it reached the record (since Redis last lost pipescaler's state) by the boundary;
 * and such a start is never `late` (met or late cannot be told), nor `missed` with no read by its
 * deadline either. The daemon stamps the record's first read (seenAt) with the instant its answer
 * came: the proxy's instant, or one a stall moved the clock to while it was on its way.
 */
function verdictOfFirstRead(real: Real, v: Verdict): void {
  const reads = (real.shown.get(idOfPipe(v.pipe)) ?? []).filter((o) => o.epoch === v.epoch);
  // the latest instant the daemon may have stamped the answer with
  const stampedBy = (o: Shown) =>
    Math.max(
      o.at,
      ...real.moves.filter((m) => m.wall >= o.notedWall && m.wall <= o.handedWall + DELIVERY_MS).map((m) => m.to),
    );
  const readBefore = reads.some((o) => stampedBy(o) <= v.boundary);
  const maybeReadBefore = reads.some((o) => o.at <= v.boundary);
  const maybeReadByDeadline = reads.some((o) => o.at <= v.deadline);
  const iso = (t: number) => new Date(t).toISOString();
  const what = `verdict ${v.verdict}${v.reason ? ` (${v.reason})` : ''} of ${v.pipe} at ${iso(v.boundary)}; reads since the last loss came at ${JSON.stringify(reads.map((o) => iso(o.at)))}`;
  if (v.reason === 'unseen' && readBefore) real.violations.push(`${what}: the pipe had been read by then`);
  if (v.verdict === 'late' && !maybeReadBefore) real.violations.push(`${what}: the pipe was first read after it`);
  if (v.verdict === 'missed' && !maybeReadBefore && !maybeReadByDeadline)
    real.violations.push(`${what}: the pipe was first read after its deadline ${iso(v.deadline)}`);
}

/**
 * Status never states as fact what it does not know: the values `accountOf` gives as the
 * platform's, at the instant it names, are each what a 200 that reached the daemon at that instant
 * showed or what the cloud held then. The daemon stamps a read or an answer with the instant it
 * came (docs/cli.md: READ is how long ago it came), so a 200 held by the proxy while the clock moved
 * (another pipe's change stalled past api.timeout) is of the instant it was handed over, not the
 * one the cloud answered at (seed 11, 300 runs, path 231). An answer the proxy handed over is
 * still on its way while the daemon has not read it: a stall that moves the clock meanwhile makes
 * the moved instant its own (seed 11, 300 runs, path 168, on a loaded machine).
 */
async function statusKnown(real: Real): Promise<void> {
  for (const [id, pipe] of Object.entries(PIPES)) {
    const rec = await real.store.read(pipe.name);
    const { platform } = accountOf(rec, real.clock);
    if (platform.at === null) continue;
    const at = platform.at;
    const then = (real.shown.get(id) ?? []).filter((o) => stampedAt(real, o, at));
    const before = (real.shown.get(id) ?? []).filter((o) => o.at <= at).at(-1);
    const iso = (t: number) => new Date(t).toISOString();
    for (const [f, v] of Object.entries(platform.values)) {
      if (then.some((o) => o.answered[f] === v || o.held[f] === v)) continue;
      real.violations.push(
        `status of ${pipe.name} states ${f} ${v} at ${iso(at)}; that instant showed ${JSON.stringify(then.map((o) => o.answered[f]))}, held ${JSON.stringify(then.map((o) => o.held[f]))}${before ? `; the last 200 before it came at ${iso(before.at)} (sent at ${iso(before.sentAt)}) showing ${JSON.stringify(before.answered[f])}` : ''}`,
      );
    }
  }
}

export async function settle(real: Real): Promise<void> {
  await drained([real.daemon], 30_000);
  recordedOnce(real, false);
  await recordedByKey(real, false);
  await statusKnown(real);
  for (const v of real.verdicts.splice(0)) {
    verdictAfterWipes(real, v);
    verdictOfFirstRead(real, v);
  }
  expect(real.violations).toEqual([]);
  // every change whose connection was cut was recorded unsettled (outcome unknown)
  expect([...real.owed].filter(([, n]) => n > 0)).toEqual([]);
}
