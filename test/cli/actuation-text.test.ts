// How plan and status name the actuation a scale-up's lead counted on (src/cli/actuation-text.ts).
import { describe, expect, it } from 'vitest';
import { describeActuation } from '../../src/cli/actuation-text.js';

describe('describeActuation', () => {
  it("names the pipe's p95, its kind's, the configured value, and the cap", () => {
    expect(describeActuation(90_000, { ms: 90_000, source: 'pipe', samples: 34 })).toBe(
      "1m30s actuation: the pipe's p95 over its last 34 changes",
    );
    expect(describeActuation(180_000, { ms: 180_000, source: 'kind', samples: 500 }, 'stream')).toBe(
      '3m actuation: the p95 of stream pipes over their last 500 changes',
    );
    expect(describeActuation(600_000, { ms: 840_000, source: 'pipe', samples: 50 })).toBe(
      "10m actuation: the pipe's p95 over its last 50 changes, capped at evaluate.actuation.max: 14m measured",
    );
    expect(describeActuation(30_000, { ms: undefined, source: 'configured', samples: 3 })).toBe(
      '30s actuation: evaluate.actuation.expected, only 3 measured yet',
    );
    expect(describeActuation(0, { ms: undefined, source: 'configured', samples: 0 })).toBe(
      '0s actuation: evaluate.actuation.expected, none measured yet',
    );
    expect(describeActuation(30_000, null)).toBe(
      '30s actuation: evaluate.actuation.expected, the measured ones not read',
    );
  });
});
