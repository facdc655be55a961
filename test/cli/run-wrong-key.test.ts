// `pipescaler run` on the embedded cloud with a wrong key secret: the first refused call says it at
// once, in one line for the key naming its id (never the secret), not a minute later at the key's
// check and not once per pipe. Needs `npm run build` first.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO, REDIS_URL, cleanupPrefix, uniquePrefix } from '../daemon/helpers.js';
import { runUntil } from './run-until.js';

const prefix = uniquePrefix('wrong-key');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('run with a wrong API key', () => {
  it('says the key is refused once, at the first refused call, naming the key id and not the secret', async () => {
    const started = Date.now();
    const r = await runUntil(
      ['config/pipescaler.yaml', '--log-format', 'json'],
      {
        PIPESCALER_REDIS_PREFIX: prefix,
        PIPESCALER_KEY_ID: DEMO.keyId,
        PIPESCALER_KEY_SECRET: 'wrong-secret-never-shown',
      },
      /"msg":"pipe read failed"|refuses it \(401/,
      // the first call goes at the first tick (evaluate.cron every 30 s), up to 30 s after the start
      42_000,
    );
    expect(r.matched, r.stdout + r.stderr).toBe(true);
    // long before the key's first check (api.checkEvery: 1 min)
    expect(Date.now() - started).toBeLessThan(45_000);
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; msg: string; key?: string; keyId?: string; pipes?: number });
    const refused = lines.filter((l) => l.msg.includes('refuses it'));
    expect(refused).toEqual([
      expect.objectContaining({
        level: 50,
        key: 'default',
        keyId: DEMO.keyId,
        pipes: 10,
        msg: expect.stringMatching(
          new RegExp(`^key default \\(keyId ${DEMO.keyId}\\): the platform refuses it \\(401 API_UNAUTHORIZED\\)`),
        ),
      }),
    ]);
    // it came first, and no pipe has a line of its own for it
    expect(lines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([refused[0]!.msg]);
    expect(r.stdout).not.toContain('wrong-secret-never-shown');
  }, 60_000);
});
