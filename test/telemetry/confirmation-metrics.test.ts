// A confirmation that measured no propagation (in force at its own answer) or a lost first send is a
// confirmation, not an actuation sample: it is counted apart (pipescaler_actuation_samples_skipped_total) and leaves the latency series alone.
import { describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import {
  Registry,
  bindConfirmationEvents,
  createConfirmationMetrics,
  createLogger,
} from '../../src/telemetry/index.js';
import { parseScrape, sampleValue } from './exposition-parse.js';

describe('confirmation metrics', () => {
  it('observes the samples, and counts the confirmations that are none (in force at its own answer, a change sent again) without observing them', async () => {
    const registry = new Registry();
    const emitter = new DaemonEmitter();
    bindConfirmationEvents(emitter, createConfirmationMetrics(registry), createLogger({ level: 'silent' }));
    const change = { pipe: 'orders-events', kind: 'stream' as const, values: { replicas: 6 }, sentAt: 0 };
    emitter.emit('confirmed', { ...change, confirmedAt: 180_000, actuationMs: 180_000 });
    emitter.emit('confirmed', {
      ...change,
      confirmedAt: 90,
      actuationMs: 90,
      notSample: 'in_force_at_answer',
    });
    emitter.emit('confirmed', { ...change, confirmedAt: 615_000, actuationMs: 615_000, notSample: 'unconfirmed' });
    const s = parseScrape(await registry.metrics());
    expect(sampleValue(s, 'pipescaler_actuation_seconds_count', { kind: 'stream' })).toBe(1);
    expect(sampleValue(s, 'pipescaler_actuation_seconds_sum', { kind: 'stream' })).toBe(180);
    expect(sampleValue(s, 'pipescaler_pipe_actuation_seconds', { pipe: 'orders-events' })).toBe(180);
    expect(
      sampleValue(s, 'pipescaler_actuation_samples_skipped_total', { kind: 'stream', reason: 'in_force_at_answer' }),
    ).toBe(1);
    expect(
      sampleValue(s, 'pipescaler_actuation_samples_skipped_total', { kind: 'stream', reason: 'unconfirmed' }),
    ).toBe(1);
  });
});
