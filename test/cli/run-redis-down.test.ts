// `pipescaler run` with Redis unreachable (a port nothing listens on): each line of the outage names
// the address and the db, never the password; the outage is said again while it lasts; a SIGTERM
// then stops the daemon cleanly, exit 0, though the start never got Redis.
// Needs `npm run build` first.
import { describe, expect, it } from 'vitest';
import { freePort } from '../redis-servers.js';
import { uniquePrefix } from '../daemon/helpers.js';
import { runUntil } from './run-until.js';

describe('run while Redis is down', () => {
  it('names the address and db, says it again, and stops on SIGTERM with exit 0', async () => {
    const port = await freePort();
    const r = await runUntil(
      ['config/pipescaler.yaml', '--log-format', 'json'],
      {
        PIPESCALER_REDIS_URL: `redis://:pw-never-shown@127.0.0.1:${port}/3`,
        PIPESCALER_REDIS_PREFIX: uniquePrefix('redis-down'),
      },
      /still not reachable after 1 s/,
    );
    expect(r.matched, r.stdout + r.stderr).toBe(true);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; where?: string });
    const outage = lines.filter((l) => l.msg.startsWith('redis ('));
    expect(outage.map((l) => l.msg)).toEqual([
      `redis (127.0.0.1:${port} db 3) not reachable at start; evaluations wait for it, and the daemon keeps trying`,
      `redis (127.0.0.1:${port} db 3) still not reachable after 1 s; evaluations wait for it, and the daemon keeps trying`,
    ]);
    expect(lines.at(-1)).toMatchObject({ msg: 'daemon stopped', graceful: true });
    expect(r.stdout).not.toContain('pw-never-shown');
  });
});
