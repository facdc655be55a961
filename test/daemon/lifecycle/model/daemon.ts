// The daemon under test, and what the model takes of its events and audit lines.
import { createDaemon, DaemonEmitter, type Daemon } from '../../../../src/daemon/index.js';
import type { ScalingField, ScalingValues } from '../../../../src/api/index.js';
import { UNSETTLED_MS } from '../../../../src/daemon/lifecycle/answers.js';
import { bindAuditLog, type TelemetryLogger } from '../../../../src/telemetry/index.js';
import { FAST_WORKERS } from '../../helpers.js';
import { changeOf } from './invariants.js';
import { PIPES, redis, stats } from './setup.js';
import type { Real } from './state.js';

/** What the model reads of an audit line. */
interface AuditLine {
  audit?: boolean;
  result?: string;
  requestId?: string;
  idempotencyKey?: string;
  outcomeReported?: string;
}

/** A drift whose every changed field shows a change of ours the cloud carried out late (CUT_LATE),
 *  read more than UNSETTLED_MS after its send: the daemon no longer waits for it, as designed. */
function tooLate(real: Real, id: string, d: { expected: ScalingValues; actual: ScalingValues }): boolean {
  const changed = (Object.keys(d.actual) as ScalingField[]).filter((f) => d.expected[f] !== d.actual[f]);
  return real.landedLate.some(
    (l) => l.id === id && real.clock - l.at > UNSETTLED_MS && changed.every((f) => l.values[f] === d.actual[f]),
  );
}

export function startDaemon(real: Real): Daemon {
  const emitter = new DaemonEmitter();
  emitter.on('drift', (d) => {
    const id = Object.keys(PIPES).find((k) => PIPES[k]!.name === d.pipe);
    if (id !== undefined && !real.handled.has(id) && !tooLate(real, id, d))
      real.violations.push(`drift of ${d.pipe}, never changed by hand: ${JSON.stringify(d)}`);
  });
  emitter.on('change:landed', (l) => {
    if (real.landedLate.some((x) => x.key !== undefined && x.key === l.idempotencyKey)) stats.landedLate.reported += 1;
  });
  emitter.on('verdict', (v) => {
    if (v.reason === 'unseen') stats.unseen += 1;
    real.verdicts.push({
      pipe: v.pipe,
      boundary: v.boundary,
      deadline: v.deadline,
      verdict: v.verdict,
      target: v.target,
      ...(v.reason !== undefined ? { reason: v.reason } : {}),
      epoch: real.losses,
    });
  });
  emitter.on('outcome', (o) => {
    if (o.outcome === 'applied') {
      const c = real.changes.find((x) => x.requestId !== undefined && x.requestId === o.requestId);
      if (c) c.outcomes.push('applied');
      else real.violations.push(`applied outcome of ${o.pipe} with no 200 of its request id ${o.requestId}`);
    }
    if (o.outcome === 'landed_late') changeOf(real, o.pipe, o.after)?.outcomes.push('landed_late');
    if (o.outcome === 'unsettled') {
      const c = changeOf(real, o.pipe, o.after);
      if (c) c.lost = true;
    }
    if (o.outcome !== 'unsettled') return;
    const id = Object.keys(PIPES).find((k) => PIPES[k]!.name === o.pipe);
    const owed = id === undefined ? 0 : (real.owed.get(id) ?? 0);
    if (id !== undefined && owed > 0) real.owed.set(id, owed - 1);
  });
  const audit = (line: AuditLine) => {
    if (line.audit !== true) return;
    // the change's record by its key: its 200's line (unless a read reported its outcome first), or
    // the read's landed_late or outcome_unknown line
    const { result, idempotencyKey: key } = line;
    const records =
      result === 'landed_late' ||
      result === 'outcome_unknown' ||
      (result === 'applied' && line.outcomeReported === undefined);
    if (records) stats.recorded[result] = (stats.recorded[result] ?? 0) + 1;
    if (records && key !== undefined) real.recorded.set(key, [...(real.recorded.get(key) ?? []), result]);
    if (result !== 'applied') return;
    const c = real.changes.find((x) => x.requestId !== undefined && x.requestId === line.requestId);
    if (c) c.audits += 1;
    else real.violations.push(`audit line of a change with no 200 of its request id ${line.requestId}`);
  };
  const quiet = () => {};
  bindAuditLog(emitter, { info: audit, error: audit, debug: quiet, warn: audit } as unknown as TelemetryLogger);
  return createDaemon({
    config: real.config,
    redis,
    prefix: real.prefix,
    now: () => real.clock,
    emitter,
    schedule: false,
    watch: false,
    workerOptions: FAST_WORKERS,
  });
}
