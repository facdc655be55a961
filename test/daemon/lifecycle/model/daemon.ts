// The daemon under test, and what the model takes of its events and audit lines.
import { createDaemon, DaemonEmitter, type Daemon } from '../../../../src/daemon/index.js';
import { bindAuditLog, type TelemetryLogger } from '../../../../src/telemetry/index.js';
import { FAST_WORKERS } from '../../helpers.js';
import { changeOf } from './invariants.js';
import { PIPES, redis } from './setup.js';
import type { Real } from './state.js';

export function startDaemon(real: Real): Daemon {
  const emitter = new DaemonEmitter();
  emitter.on('drift', (d) => {
    const id = Object.keys(PIPES).find((k) => PIPES[k]!.name === d.pipe);
    if (id !== undefined && !real.handled.has(id))
      real.violations.push(`drift of ${d.pipe}, never changed by hand: ${JSON.stringify(d)}`);
  });
  emitter.on('verdict', (v) => {
    real.verdicts.push({
      pipe: v.pipe,
      boundary: v.boundary,
      verdict: v.verdict,
      target: v.target,
      ...(v.reason !== undefined ? { reason: v.reason } : {}),
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
  const audit = (line: { audit?: boolean; result?: string; requestId?: string }) => {
    if (line.audit !== true || line.result !== 'applied') return;
    const c = real.changes.find((x) => x.requestId !== undefined && x.requestId === line.requestId);
    if (c) c.audits += 1;
    else real.violations.push(`audit line of a change with no 200 of its request id ${line.requestId}`);
  };
  const quiet = () => {};
  bindAuditLog(emitter, { info: audit, error: audit, debug: quiet, warn: quiet } as unknown as TelemetryLogger);
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
