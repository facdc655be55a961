// A newcomer's `npm start`: the BUILT daemon on the shipped config, against the embedded cloud,
// logs an "applied" decision within a minute, and a SIGTERM stops it with exit code 0.
// Needs `npm run build` first (dist/); runs on its own Redis prefix via PIPESCALER_REDIS_PREFIX.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL, cleanupPrefix, uniquePrefix } from './helpers.js';

const prefix = uniquePrefix('newcomer');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('npm start on the shipped config', () => {
  it('applies a decision within 60 s and exits 0 on SIGTERM', async () => {
    expect(existsSync('dist/cli/main.js'), 'build first: npm run build').toBe(true);
    const child = spawn(process.execPath, ['dist/cli/main.js', 'run', 'config/pipescaler.yaml'], {
      env: { ...process.env, PIPESCALER_REDIS_PREFIX: prefix, PIPESCALER_TELEMETRY_LISTEN: '127.0.0.1:0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    let telemetryUrl: string | undefined;
    try {
      const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no applied decision within 60 s; stderr: ${stderr}`)), 60_000);
        let buffer = '';
        child.stdout.on('data', (b: Buffer) => {
          buffer += b.toString();
          const lines = buffer.split('\n');
          buffer = lines.pop()!;
          for (const l of lines) {
            let entry: Record<string, unknown>;
            try {
              entry = JSON.parse(l) as Record<string, unknown>;
            } catch {
              continue;
            }
            if (entry.msg?.toString().startsWith('telemetry listening')) telemetryUrl = entry.url as string;
            if (entry.result === 'applied' && typeof entry.pipe === 'string') {
              clearTimeout(timer);
              resolve(entry);
            }
          }
        });
        void exited.then(([code]) => reject(new Error(`daemon exited early (${code}); stderr: ${stderr}`)));
      });
      expect(line).toMatchObject({
        pipe: expect.any(String),
        before: expect.any(Object),
        after: expect.any(Object),
        requestId: expect.any(String),
      });
      expect(Array.isArray(line.reasons)).toBe(true);
      // The telemetry endpoint answers: ready (Redis, config, the API heard from), and metrics
      // that include the daemon's own and the BullMQ queues'.
      expect(telemetryUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const ready = await fetch(`${telemetryUrl}/readyz`);
      expect(ready.status).toBe(200);
      const metrics = await (await fetch(`${telemetryUrl}/metrics`)).text();
      expect(metrics).toMatch(/^pipescaler_/m);
      expect(metrics).toMatch(/^bullmq_job_count\{/m);
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
    }
    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(stderr).toBe('');
  }, 90_000);
});
