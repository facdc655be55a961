// The series budget: 10,000 pipes through the daemon's own event path (startDaemonTelemetry, the
// bindings, every per-pipe event) leave at most 10 series carrying each pipe's name by default,
// and per-pipe detail brings the rest back when asked for.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import { createLogger, startDaemonTelemetry } from '../../src/telemetry/index.js';
import { emitFleetTick, fleetPipes, type FleetPipe } from './fleet-events.js';

const PIPES = 10_000;

async function scrapeFleet(pipes: readonly FleetPipe[], perPipeDetail: boolean): Promise<string[]> {
  const emitter = new DaemonEmitter();
  const registry = new Registry();
  const config = {
    pipes,
    evaluate: { reconcileMs: 600_000 },
    telemetry: { listen: '127.0.0.1:0', perPipeDetail },
    api: { keys: Object.fromEntries(pipes.map((p) => [p.key, {}])) },
  };
  const telemetry = await startDaemonTelemetry({
    emitter,
    logger: createLogger({ level: 'silent', pretty: false }),
    config: () => config,
    queues: () => [],
    registry,
  });
  try {
    emitFleetTick(emitter, pipes, 0);
    emitFleetTick(emitter, pipes, 1);
    // one pipe in every kind of trouble at once: its conditions have their series
    const troubled = pipes[7]!.name;
    emitter.emit('decision', {
      pipe: troubled,
      direction: 'up',
      result: 'failed',
      reason: 'API_SERVER_ERROR',
      windows: [],
      before: {},
      after: {},
      reasons: [],
    });
    emitter.emit('paused', { pipe: troubled, paused: true });
    emitter.emit('parked', { pipe: troubled, code: 'API_UNAUTHORIZED', message: '401' });
    emitter.emit('backoff', { pipe: troubled, backingOff: true, failures: 3 });
    emitter.emit('unconfirmed:seen', { pipe: troubled, unconfirmed: true });
    const res = await fetch(`${telemetry.url}/metrics`);
    return (await res.text()).split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  } finally {
    await telemetry.close();
  }
}

/** Series per pipe name (the `pipe` label's value). */
function perPipe(lines: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines) {
    const pipe = /[{,]pipe="([^"]*)"/.exec(line)?.[1];
    if (pipe !== undefined) counts.set(pipe, (counts.get(pipe) ?? 0) + 1);
  }
  return counts;
}

describe('the series budget of 10,000 pipes', () => {
  const pipes = fleetPipes({ pipes: PIPES, policies: 20, keys: 10 });

  it('keeps at most 10 series per pipe by default, the rest per policy or key', async () => {
    const lines = await scrapeFleet(pipes, false);
    const counts = perPipe(lines);
    expect(counts.size).toBe(PIPES);
    const most = Math.max(...counts.values());
    expect(most).toBeLessThanOrEqual(10);
    // what stays per pipe: desired and applied per field (3 + 3 for a stream pipe), and failing,
    // unconfirmed and paused while they hold
    const families = (pipe: string) => lines.filter((l) => l.includes(`pipe="${pipe}"`)).map((l) => l.split(/[{ ]/)[0]);
    expect(families('pipe-00042')).toEqual([
      ...Array<string>(3).fill('pipescaler_desired_scaling'),
      ...Array<string>(3).fill('pipescaler_applied_scaling'),
    ]);
    expect(new Set(families('pipe-00007'))).toEqual(
      new Set([
        'pipescaler_desired_scaling',
        'pipescaler_applied_scaling',
        'pipescaler_pipe_failing',
        'pipescaler_pipe_unconfirmed',
        'pipescaler_paused',
      ]),
    );
    expect(counts.get('pipe-00007')).toBe(9);
    // parked and backing off are per key and per policy
    expect(lines).toContain('pipescaler_parked{key="key-7"} 1');
    expect(lines).toContain('pipescaler_pipe_backoff{policy="policy-7"} 1');
    // everything else is per policy: the verdicts of 10,000 pipes in 20 policies are 20 x 4 series
    expect(lines.filter((l) => l.startsWith('pipescaler_window_verdicts_total{')).length).toBe(20 * 4);
    // the whole scrape is bounded by the pipes' share and a fleet-sized rest
    expect(lines.length).toBeLessThanOrEqual(PIPES * 10 + 5_000);
  });

  it('brings every per-pipe family back under telemetry.perPipeDetail', async () => {
    const lines = await scrapeFleet(pipes.slice(0, 100), true);
    const one = new Set(lines.filter((l) => l.includes('pipe="pipe-00042"')).map((l) => l.split(/[{ ]/)[0]));
    for (const name of [
      'pipescaler_decision_results_total',
      'pipescaler_window_verdicts_total',
      'pipescaler_window_active',
      'pipescaler_pipe_actuation_seconds',
      'pipescaler_metric_value',
      'pipescaler_forecast_value',
    ])
      expect(one).toContain(name);
    // with its policy beside it, so a sum by policy reads the same in both modes
    expect(lines).toContain('pipescaler_window_verdicts_total{policy="policy-2",pipe="pipe-00042",verdict="met"} 2');
  });
});

describe('telemetry.perPipeDetail at a reload', () => {
  it('starts the families kept per policy over, with the pipe label or without it', async () => {
    const pipes = fleetPipes({ pipes: 4, policies: 2, keys: 1 });
    let config = {
      pipes,
      evaluate: { reconcileMs: 600_000 },
      telemetry: { listen: '127.0.0.1:0', perPipeDetail: false },
    };
    const emitter = new DaemonEmitter();
    const registry = new Registry();
    const telemetry = await startDaemonTelemetry({
      emitter,
      logger: createLogger({ level: 'silent', pretty: false }),
      config: () => config,
      queues: () => [],
      registry,
    });
    const verdicts = async () =>
      (await registry.metrics()).split('\n').filter((l) => l.startsWith('pipescaler_window_verdicts_total{'));
    try {
      emitFleetTick(emitter, pipes, 0);
      expect(await verdicts()).toContain('pipescaler_window_verdicts_total{policy="policy-0",verdict="met"} 2');
      config = { ...config, telemetry: { ...config.telemetry, perPipeDetail: true } };
      emitter.emit('config:reload', { result: 'success' });
      emitFleetTick(emitter, pipes, 1);
      const detailed = await verdicts();
      expect(detailed).toContain(
        'pipescaler_window_verdicts_total{policy="policy-0",pipe="pipe-00000",verdict="met"} 1',
      );
      expect(detailed.filter((l) => !l.includes('pipe="'))).toEqual([]);
      config = { ...config, telemetry: { ...config.telemetry, perPipeDetail: false } };
      emitter.emit('config:reload', { result: 'success' });
      expect((await verdicts()).filter((l) => l.includes('pipe="'))).toEqual([]);
      expect((await registry.metrics()).includes('pipescaler_metric_value{')).toBe(false);
    } finally {
      await telemetry.close();
    }
  });
});
