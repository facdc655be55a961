// Where `pipescaler api` gets its base URL and key: flags first, then the environment. The secret
// is never a plain flag value (it would land in shell history and `ps`): a file or the env only.
import { readFileSync } from 'node:fs';
import { ApiClient } from '../api/index.js';
import { UserError } from './run-cli.js';

export interface ConnectionFlags {
  url?: string;
  keyId?: string;
  keySecretFile?: string;
}

export interface Connection {
  baseUrl: string;
  keyId: string;
  keySecret: string;
}

export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): Connection {
  const baseUrl = flags.url ?? env.PIPESCALER_API_URL;
  if (!baseUrl) throw new UserError('no API URL: pass --url URL or set PIPESCALER_API_URL');
  if (!isHttpUrl(baseUrl)) throw new UserError(`API URL "${baseUrl}" is not an http(s) URL`);
  const keyId = flags.keyId ?? env.PIPESCALER_KEY_ID;
  if (!keyId) throw new UserError('no API key id: pass --key-id ID or set PIPESCALER_KEY_ID');
  const keySecret = flags.keySecretFile !== undefined ? readSecretFile(flags.keySecretFile) : env.PIPESCALER_KEY_SECRET;
  if (!keySecret) throw new UserError('no API key secret: set PIPESCALER_KEY_SECRET or pass --key-secret-file FILE');
  return { baseUrl, keyId, keySecret };
}

function readSecretFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(
      `--key-secret-file ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const secret = text.trim();
  if (!secret) throw new UserError(`--key-secret-file ${file}: the file is empty`);
  return secret;
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * A 429 makes the client wait for the platform's window to reset (up to a minute) before it tries
 * again: say so on stderr, or the command looks hung.
 */
export function sayRateLimitWaits(
  client: ApiClient,
  say: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): void {
  client.events.on('retry', ({ operation, code, delayMs }) => {
    if (code !== 'API_RATE_LIMITED') return;
    say(
      `rate limited (429 on ${operation}): waiting ${formatWait(delayMs)} for the key's window to reset, then trying again`,
    );
  });
}

function formatWait(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

/** Runs fn with a client for the resolved connection and closes it afterwards. */
export async function withClient<T>(flags: ConnectionFlags, fn: (client: ApiClient) => Promise<T>): Promise<T> {
  const client = new ApiClient(resolveConnection(flags));
  sayRateLimitWaits(client);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
