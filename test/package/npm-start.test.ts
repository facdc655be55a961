// `npm start` is stopped as the daemon is: a SIGTERM to npm (a service manager, a script) and a
// Ctrl-C in its terminal (SIGINT to the whole process group) stop the daemon gracefully, exit 0, and
// free its telemetry port; no daemon goes on under parent 1. The script execs node, so npm's
// signal reaches it (a `sh -c` in between would not pass it on).
// Runs `npm start` itself (its build step is quick when dist/ is current).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL, cleanupPrefix, uniquePrefix } from '../daemon/helpers.js';
import { freePort } from '../redis-servers.js';

const prefix = uniquePrefix('npm-start');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function portFree(port: number): Promise<boolean> {
  const srv = createServer();
  srv.listen(port, '127.0.0.1');
  try {
    await once(srv, 'listening');
  } catch {
    return false; // EADDRINUSE
  }
  await new Promise((r) => srv.close(r));
  return true;
}

/** `npm start` in its own process group, until the daemon says it started; then `signal` as asked. */
async function startAndSignal(send: (npmPid: number) => void) {
  const port = await freePort();
  const npm = spawn('npm', ['start', '--silent'], {
    env: { ...process.env, PIPESCALER_REDIS_PREFIX: prefix, PIPESCALER_TELEMETRY_LISTEN: `127.0.0.1:${port}` },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  npm.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = once(npm, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  try {
    const daemonPid = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "daemon started" within 60 s: ${stdout}${stderr}`)), 60_000);
      npm.stdout.on('data', (b: Buffer) => {
        stdout += b.toString();
        const started = /^\{.*"msg":"daemon started".*\}$/m.exec(stdout);
        if (!started) return;
        clearTimeout(timer);
        resolve((JSON.parse(started[0]) as { pid: number }).pid);
      });
      void exited.then(([code]) => reject(new Error(`npm start exited early (${code}): ${stdout}${stderr}`)));
    });
    expect(daemonPid).not.toBe(npm.pid);
    expect(await portFree(port)).toBe(false);
    send(npm.pid!);
    const [code, signal] = await exited;
    // asked before the cleanup below kills what is left
    return { code, signal, stdout, stderr, daemonLeft: alive(daemonPid), portFree: await portFree(port) };
  } finally {
    // whatever is left of the group (a daemon orphaned by a failing run included) goes
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // nothing left
    }
  }
}

describe('npm start', () => {
  it('stops the daemon gracefully on a SIGTERM to npm: exit 0, no daemon left, the port free', async () => {
    const r = await startAndSignal((pid) => process.kill(pid, 'SIGTERM'));
    expect({ code: r.code, signal: r.signal, stderr: r.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(r.daemonLeft).toBe(false);
    expect(r.portFree).toBe(true);
    expect(r.stdout).toMatch(/"signal":"SIGTERM".*"msg":"stopping: /);
    expect(r.stdout).toMatch(/"graceful":true.*"msg":"daemon stopped"/);
  }, 90_000);

  it('stops it gracefully on a Ctrl-C (SIGINT to npm and the daemon both): one stop, not a forced exit', async () => {
    const r = await startAndSignal((pid) => process.kill(-pid, 'SIGINT'));
    expect({ code: r.code, signal: r.signal, stderr: r.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(r.daemonLeft).toBe(false);
    expect(r.portFree).toBe(true);
    expect(r.stdout).toMatch(/"graceful":true.*"msg":"daemon stopped"/);
    expect(r.stdout).not.toContain('second signal');
  }, 90_000);
});
