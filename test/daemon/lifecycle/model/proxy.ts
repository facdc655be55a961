// The proxy's side of the model: it counts the platform's window, makes the faults the commands
// queued, and notes every change, its answer and what each readable 200 showed (state.ts Real);
// the invariants a single request breaks are held here, as the request passes.
import { PipeState, SCALABLE_PIPE_STATES, clampToLimit, type ScalingField } from '../../../../src/api/index.js';
import { until } from '../../helpers.js';
import type { Answer, Seen, Tamper } from '../../tamper-proxy.js';
import { CUT_BEFORE, CUT_AFTER, CUT_LATE, LIMIT, PIPES, STALL, STALL_LATE, redis, stats } from './setup.js';
import { pipeIdOf, type Real, type SentChange, type Shown } from './state.js';

export function watch(real: Real): void {
  const tamper = changes(real);
  real.proxy.tamper = async (req, upstream) => {
    // The platform counts each request as it arrives, and says so in every answer's headers.
    const granted = real.limiter.take();
    const headers = real.limiter.headers();
    const delay = real.delays.shift();
    if (!granted) {
      if (!real.limiter.daemonsFault()) stats.platform.excused += 1;
      else
        real.violations.push(
          `the platform refused ${req.method} ${req.url}: ${real.limiter.count} requests in its window of ${LIMIT.requests}`,
        );
      return {
        status: 429,
        headers: { ...headers, 'content-type': 'application/json' },
        text: '{"error":"TOO_MANY_REQUESTS"}',
      };
    }
    const sentAt = real.clock;
    const answer = await tamper(req, upstream);
    // held past the window: its Reset tells of a window over by the time the budget reads it
    if (delay !== undefined && delay > 0) {
      stats.lateAnswers += 1;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    // what the daemon is given now, at this instant of its clock (which another pipe's stalled
    // change may have moved while this answer was held)
    const shown = noteShown(real, req, answer, sentAt);
    if (shown) {
      const id = pipeIdOf(req.url) ?? '';
      const slow = real.inFlight.get(id);
      real.inFlight.delete(id);
      if (slow !== undefined) await new Promise((resolve) => setTimeout(resolve, slow));
      shown.handedWall = Date.now();
    }
    const start = real.limiter.start;
    if (answer.status === 429 && real.limiter.spentToldAt === Infinity && real.limiter.start === start)
      real.limiter.spentToldAt = Date.now();
    return answer.status === 429 ? answer : { ...answer, headers: { ...answer.headers, ...headers } };
  };
}

function changes(real: Real): Tamper {
  return async (req, upstream) => {
    const id = req.method === 'PATCH' ? pipeIdOf(req.url) : undefined;
    if (id === undefined) return upstream();
    const body = req.body ? (JSON.parse(req.body) as Record<string, number | null>) : {};
    const values = Object.entries(body).filter(([, v]) => v !== null && v !== undefined) as [ScalingField, number][];
    const onItsWay = id === undefined ? [] : real.cloud.store.pendingChanges(id);
    if (onItsWay.length === 0 && id !== undefined) real.tainted.delete(id);
    if (values.length > 0 && id !== undefined && onItsWay.length > 0 && !real.tainted.has(id)) {
      const coming: Record<string, number | null | undefined> = {};
      for (const c of onItsWay) Object.assign(coming, c.values);
      if (values.every(([f, v]) => coming[f] === v))
        real.violations.push(`change to ${id} sent again while on its way: ${req.body}`);
    }
    if (values.length > 0 && real.holding === id)
      real.violations.push(
        `change to ${id} sent again while its job's first attempt waits for its answer: ${req.body}`,
      );
    const sent: SentChange | undefined =
      values.length > 0
        ? { id, values: Object.fromEntries(values), key: req.idempotencyKey, outcomes: [], audits: 0, req }
        : undefined;
    if (sent) real.changes.push(sent);
    if (values.length > 0) {
      stats.changesSent += 1;
      if (real.unsettled.has(id))
        real.violations.push(`change to ${id} before a read settled the last one: ${req.body}`);
      const state = real.seen.get(id);
      if (state === undefined) real.violations.push(`change to ${id} never seen: ${req.body}`);
      else if (!SCALABLE_PIPE_STATES.has(state as PipeState))
        real.violations.push(`change to ${id} last seen ${state}: ${req.body}`);
      const pipe = real.config.pipes.find((p) => p.pipeId.toLowerCase() === id);
      for (const [f, v] of values) {
        const b = pipe?.bounds[f];
        if (clampToLimit(f, v) !== v || (b?.max !== undefined && v > b.max) || (b?.min !== undefined && v < b.min))
          real.violations.push(`${f} ${v} outside bounds or ranges for ${id}`);
      }
    }
    const cut = values.length > 0 ? real.cuts.shift() : undefined;
    if (cut === STALL || cut === STALL_LATE) {
      const answer = await stallMidChange(real, id, upstream, cut === STALL_LATE);
      if (sent) noteAnswer(real, id, sent, answer, true);
      return answer;
    }
    if (cut !== undefined) {
      // kept for the cloud to carry out after a newer change of the pipe (commands.ts landLate)
      if (cut === CUT_LATE && sent) real.heldLate.push({ sent, at: real.clock, upstream });
      if (cut === CUT_AFTER && sent) noteCarriedOut(real, sent, await upstream());
      else if (cut === CUT_AFTER) await upstream();
      real.unsettled.add(id);
      real.owed.set(id, (real.owed.get(id) ?? 0) + 1);
      stats.cutChanges[cut === CUT_BEFORE ? 'before' : cut === CUT_LATE ? 'late' : 'after'] += 1;
      throw new Error('cut'); // the proxy destroys the socket: no answer
    }
    const status = real.faults.shift();
    if (status === 429) real.limiter.spend();
    if (status === 429) return fault(status, real.limiter.headers());
    if (status !== undefined && status !== 0) return fault(status);
    const answer = await upstream();
    if (sent) noteCarriedOut(real, sent, answer);
    if (status === 0 && answer.status === 200) {
      if (values.length > 0) real.unsettled.add(id);
      return { ...answer, text: '{"status":200,"result":' };
    }
    if (answer.status === 200 && values.length === 0) real.unsettled.delete(id);
    if (answer.status === 200) {
      const state = (JSON.parse(answer.text) as { result?: { state?: string } }).result?.state;
      if (state !== undefined) real.seen.set(id, state);
    }
    noteAnswer(real, id, sent, answer, false);
    return answer;
  };
}

/** The cloud answered a change 200: it carried it out (once per Idempotency-Key, or twice sent). */
export function noteCarriedOut(real: Real, sent: SentChange, answer: Answer): void {
  if (answer.status !== 200 || sent.key === undefined) return;
  const n = (real.carriedOut.get(sent.key) ?? 0) + 1;
  real.carriedOut.set(sent.key, n);
  if (n > 1)
    real.violations.push(`change ${sent.key} to ${sent.id} carried out ${n} times: ${JSON.stringify(sent.values)}`);
}

/** A readable 200 to a change: its request id. */
function noteAnswer(real: Real, id: string, sent: SentChange | undefined, answer: Answer, held: boolean): void {
  if (answer.status !== 200 || !sent) return;
  const body = JSON.parse(answer.text) as { requestId?: string };
  if (body.requestId !== undefined) {
    sent.requestId = body.requestId;
    if (held) sent.held = true;
  }
}

/** A readable 200 of a pipe (a read's or a change's) as the proxy hands it to the daemon: what it
 *  showed and what the cloud holds now, at the daemon's instant now. */
function noteShown(real: Real, req: Seen, answer: Answer, sentAt: number): Shown | undefined {
  const id = req.method === 'PATCH' ? pipeIdOf(req.url) : undefined;
  if (id === undefined || answer.status !== 200) return undefined;
  let body: { result?: { scaling?: Record<string, unknown> } };
  try {
    body = JSON.parse(answer.text) as typeof body;
  } catch {
    return undefined; // a 200 that cannot be read: the daemon learns nothing from it
  }
  const list = real.shown.get(id) ?? [];
  const now = Date.now();
  const shown: Shown = {
    at: real.clock,
    sentAt,
    answered: body.result?.scaling ?? {},
    held: { ...(real.cloud.store.pipe(id)?.scaling ?? {}) },
    notedWall: now,
    handedWall: now,
    epoch: real.losses,
  };
  list.push(shown);
  real.shown.set(id, list);
  return shown;
}

/** The change reaches the cloud; its job loses its lock and runs again before the answer comes. */
async function stallMidChange(real: Real, id: string, upstream: () => Promise<Answer>, late: boolean): Promise<Answer> {
  const answer = await upstream();
  stats.stalls += 1;
  const name = PIPES[id]?.name;
  const queue = real.daemon.queues().find((q) => q.name.startsWith('apply-'));
  const job = queue ? (await queue.getActive()).find((j) => (j.data as { pipe?: string }).pipe === name) : undefined;
  if (!queue || !job?.id) return answer;
  real.holding = id;
  // the request's time runs out on the daemon's clock while the answer is held
  if (late) {
    real.clock += real.config.api.timeoutMs + 1_000;
    real.moves.push({ wall: Date.now(), to: real.clock });
    stats.lateStalls += 1;
  }
  try {
    await redis.del(`${real.prefix}:${queue.name}:${job.id}:lock`);
    const done = async () => ['completed', 'failed'].includes(await queue.getJobState(job.id!));
    await until(done, 15_000, 'the stalled job to run again').catch(() =>
      real.violations.push(`the stalled job of ${id} never ran again`),
    );
  } finally {
    real.holding = null;
  }
  return answer;
}

function fault(status: number, limit?: Record<string, string>): Answer {
  const reason: Record<number, string> = {
    400: 'BAD_REQUEST: refused',
    404: 'NOT_FOUND: Unknown pipe',
    424: 'FAILED_DEPENDENCY: Service is not running. Current state: idle',
    429: 'TOO_MANY_REQUESTS',
    500: 'INTERNAL_SERVER_ERROR: boom',
    503: 'SERVICE_UNAVAILABLE: later',
  };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (status === 429) Object.assign(headers, limit ?? { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '0.2' });
  const text =
    status === 429
      ? JSON.stringify({ error: reason[status] })
      : JSON.stringify({ status, error: reason[status], requestId: '6f1c1f1e-2f4b-4a8e-9c55-0b0b0b0b0b0b' });
  return { status, headers, text };
}
