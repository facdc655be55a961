// A second embedded demo (`pipescaler run` on the shipped config, another telemetry port) on the
// Redis prefix of one that runs is refused with one line naming the running demo; with a prefix of
// its own it starts. Needs `npm run build` first.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { readReplicas } from '../../src/daemon/store/heartbeat.js';
import { redisKeys } from '../../src/daemon/store/redis-keys.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix, until } from '../daemon/helpers.js';
import { runUntil } from './run-until.js';

const prefix = uniquePrefix('second-demo');
const own = `${prefix}-2`;
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  for (const p of [prefix, own]) await cleanupPrefix(redis, p);
  redis.disconnect();
});

describe('a second embedded demo', () => {
  it('is refused on the prefix of a running one, naming it; it starts on a prefix of its own', async () => {
    const first = spawn(
      process.execPath,
      ['dist/cli/main.js', 'run', 'config/pipescaler.yaml', '--log-format', 'json'],
      {
        env: { ...process.env, PIPESCALER_REDIS_PREFIX: prefix, PIPESCALER_TELEMETRY_LISTEN: '127.0.0.1:0' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const exited = once(first, 'exit') as Promise<[number | null]>;
    try {
      // the first demo's heartbeat says it runs an embedded cloud
      await until(
        async () => (await readReplicas(redis, redisKeys(prefix))).some((r) => r.embedded !== undefined),
        30_000,
        "the first demo's heartbeat",
      );
      const second = await runUntil(
        ['config/pipescaler.yaml', '--log-format', 'json'],
        { PIPESCALER_REDIS_PREFIX: prefix },
        /daemon started/,
      );
      expect(second.matched).toBe(false);
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(
        new RegExp(
          `^error: another embedded demo is running on the Redis prefix "${prefix}" \\(pid ${first.pid} on [^,]+, started [^,]+, its cloud at http://127\\.0\\.0\\.1:\\d+\\): .*PIPESCALER_REDIS_PREFIX=${prefix}-2\\n$`,
        ),
      );
      // the running demo's state is untouched: its replica is still there
      expect((await readReplicas(redis, redisKeys(prefix))).map((r) => r.pid)).toEqual([first.pid]);

      const apart = await runUntil(
        ['config/pipescaler.yaml', '--log-format', 'json'],
        { PIPESCALER_REDIS_PREFIX: own },
        /daemon started/,
      );
      expect(apart.matched, apart.stderr).toBe(true);
      expect(apart.code).toBe(0);
    } finally {
      first.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
    }
  }, 90_000);
});
