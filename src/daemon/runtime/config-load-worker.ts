// The worker thread of config-thread.ts: loads the config file (with the environment's overrides)
// and posts back the Config, or the error's message, and every file the load read.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { loadEffectiveConfig } from '../../config/index.js';
import type { ThreadAnswer, ThreadRead } from './config-thread.js';

const { file, env } = workerData as { file: string; env: Record<string, string | undefined> };
const reads: ThreadRead[] = [];
let answer: ThreadAnswer;
try {
  const config = loadEffectiveConfig(file, env, 'all', (path) => {
    const at = resolve(path);
    try {
      const text = readFileSync(at, 'utf8');
      reads.push({ path: at, text });
      return text;
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      reads.push({ path: at, code: typeof code === 'string' ? code : 'error' });
      throw err;
    }
  });
  answer = { config, reads };
} catch (err) {
  answer = { error: err instanceof Error ? err.message : String(err), reads };
}
parentPort?.postMessage(answer);
