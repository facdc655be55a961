// Durations as people write them in the config, the fixtures and the CLI ("30s", "5m", "1h30m", "500ms", "2d") as milliseconds. Small enough that
// a dependency would cost more than it saves; units are required so "10" never means a guess.

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;

/** Milliseconds of a duration such as "1h30m", or null when it is not one. `0` alone is 0. */
export function parseDuration(text: string): number | null {
  const s = text.trim();
  if (s === '0') return 0;
  if (!WHOLE.test(s)) return null;
  let ms = 0;
  for (const [, amount, unit] of s.matchAll(PART)) {
    ms += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  }
  return Math.round(ms);
}
