// LeadWakes: one timer per pipe, at its earliest instant; cleared at a stop. The clock is faked.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LeadWakes } from '../../../src/daemon/lanes/lead-wakes.js';

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(1_000_000);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('LeadWakes', () => {
  it("asks for each pipe's change once, at its earliest instant", async () => {
    const fired: { pipe: string; tickAt: number; at: number }[] = [];
    const wakes = new LeadWakes(async (pipe, tickAt) => {
      fired.push({ pipe, tickAt, at: Date.now() });
    });
    wakes.at('a', 1_005_000, 990_000);
    wakes.at('a', 1_003_000, 991_000); // earlier: replaces
    wakes.at('a', 1_004_000, 992_000); // later: the earlier stands
    wakes.at('b', 1_002_000, 993_000);
    expect(wakes.size).toBe(2);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(fired).toEqual([
      { pipe: 'b', tickAt: 993_000, at: 1_002_000 },
      { pipe: 'a', tickAt: 991_000, at: 1_003_000 },
    ]);
    expect(wakes.size).toBe(0);
  });

  it('fires at once for an instant past, and swallows a failed ask', async () => {
    let asked = 0;
    const wakes = new LeadWakes(async () => {
      asked++;
      throw new Error('Connection is closed.');
    });
    wakes.at('a', 999_000, 990_000);
    await vi.advanceTimersByTimeAsync(0);
    expect(asked).toBe(1);
  });

  it('asks for nothing once cleared (a stop)', async () => {
    let asked = 0;
    const wakes = new LeadWakes(async () => {
      asked++;
    });
    wakes.at('a', 1_001_000, 990_000);
    wakes.clear();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(asked).toBe(0);
    expect(wakes.size).toBe(0);
  });
});
