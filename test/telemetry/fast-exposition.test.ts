// The registry's text as the telemetry server writes it (per-pipe families from their kept lines)
// is prom-client's own, byte for byte, through changes, removals, a 0 that drops a condition's
// series, and label values that need escaping.
import { describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import { Registry, bindDaemonEvents, createMetrics, createPipeLabels } from '../../src/telemetry/index.js';
import { renderRegistry } from '../../src/telemetry/fast-exposition.js';
import { emitFleetTick, fleetPipes } from './fleet-events.js';

describe('renderRegistry', () => {
  it("writes prom-client's text from the kept lines, after changes and removals", async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry, { defaultMetrics: false, startedAt: 0 });
    const pipes = fleetPipes({ pipes: 50, policies: 3, keys: 2 });
    let detail = false;
    const labels = createPipeLabels(
      () => pipes,
      () => detail,
    );
    metrics.pipeFailing.keepZeros = labels.detail;
    const emitter = new DaemonEmitter();
    bindDaemonEvents(emitter, metrics, { pipes: () => pipes.map((p) => p.name), labels });
    emitFleetTick(emitter, pipes, 0);
    expect(await renderRegistry(registry)).toBe(await registry.metrics());
    emitFleetTick(emitter, pipes, 1);
    emitter.emit('desired', { pipe: 'pipe-00003', values: { replicas: 2 } }); // two fields removed
    metrics.desired.set({ pipe: 'a "quoted"\\name\n', field: 'replicas' }, 1.5);
    metrics.pipeFailing.set({ pipe: 'pipe-00004' }, 1);
    expect(await renderRegistry(registry)).toBe(await registry.metrics());
    metrics.pipeFailing.set({ pipe: 'pipe-00004' }, 0); // no series for a 0 without detail
    expect(await renderRegistry(registry)).not.toContain('pipescaler_pipe_failing{pipe="pipe-00004"}');
    detail = true;
    metrics.pipeFailing.set({ pipe: 'pipe-00004' }, 0);
    const text = await renderRegistry(registry);
    expect(text).toContain('pipescaler_pipe_failing{pipe="pipe-00004"} 0');
    expect(text).toBe(await registry.metrics());
  });
});
