// Runs the built bin: `npm run build` first.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { DEMO_AUTH, ORG } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('pipescaler cloud', () => {
  it('prints its URL and the demo ids (never the secret), serves, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, ['dist/cli/main.js', 'cloud', '--port', '0'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const lines: string[] = [];
    const rl = createInterface({ input: child.stdout });
    for await (const line of rl) {
      lines.push(line);
      if (lines.length === 3) break;
    }
    const out = lines.join('\n');
    expect(out, stderr).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toContain(`organizationId ${ORG}`);
    expect(out).toContain('keyId pipescaler-demo-key');
    expect(out).not.toContain('demo-secret-change-me');
    const url = /(http:\/\/\S+)/.exec(out)![1]!;
    const res = await request(`${url}/v1/organizations/${ORG}/services`, { headers: { authorization: DEMO_AUTH } });
    expect(res.statusCode).toBe(200);
    expect(((await res.body.json()) as { result: unknown[] }).result).toHaveLength(3);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code, stderr).toBe(0);
  });

  it('a bad fixtures file is one line on stderr and exit 1', async () => {
    const child = spawn(process.execPath, ['dist/cli/main.js', 'cloud', '--port', '0', '--fixtures', 'no/such.yaml'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: no\/such\.yaml: cannot read fixtures/)]);
  });
});
