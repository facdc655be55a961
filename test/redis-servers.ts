// Redis servers of a test's (or a bench scenario's) own, on free local ports, never the shared
// one: for what must not happen to the shared Redis (a restart that empties it, an eviction
// policy, Sentinel, Cluster). Each is stopped by its own pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A port nothing listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  await once(srv, 'close');
  return port;
}

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** Kill it (SIGKILL: its data, kept in memory only, is gone). */
  stop(): Promise<void>;
  /** Kill it and start a fresh, empty one on the same port. */
  restartEmpty(): Promise<void>;
}

/** Starts `redis-server` (or `redis-sentinel` with a config file) and waits until it accepts connections. */
export function spawnRedis(bin: string, args: readonly string[], port: number): Promise<ChildProcess> {
  const child = spawn(bin, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise<ChildProcess>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${bin} on ${port} did not start: ${out}`)), 10_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      if (/ready to accept connections|Sentinel ID is|Running mode=sentinel/i.test(out)) {
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve(child);
      }
    };
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${bin} on ${port} exited ${code}: ${out}`));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', onExit);
  });
}

export async function kill(child: ChildProcess | null): Promise<void> {
  if (child?.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** The arguments of a redis-server on `port`, local only, without persistence, its files in `dir`. */
export function serverArgs(port: number, dir: string, extra: readonly string[] = []): string[] {
  return ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra];
}

/** A redis-server of its own: no persistence, on a free port unless one is given. */
export async function startRedisServer(o: { port?: number; args?: readonly string[] } = {}): Promise<RedisServer> {
  for (let attempt = 1; ; attempt++) {
    const port = o.port ?? (await freePort());
    try {
      return await startOn(port, o.args);
    } catch (err) {
      // Test files run side by side: another may take the free port before this server binds it.
      if (o.port !== undefined || attempt === 3 || !/already in use/i.test(String(err))) throw err;
    }
  }
}

async function startOn(port: number, extra: readonly string[] | undefined): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), `pstest-redis-${port}-`));
  const args = serverArgs(port, dir, extra);
  let child: ChildProcess | null;
  try {
    child = await spawnRedis('redis-server', args, port);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    async stop() {
      await kill(child);
      child = null;
      rmSync(dir, { recursive: true, force: true });
    },
    async restartEmpty() {
      await kill(child);
      child = await spawnRedis('redis-server', args, port);
    },
  };
}

/** Writes a config file into `dir` and returns its path (sentinel and cluster modes need one). */
export function writeConf(dir: string, name: string, lines: readonly string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}
