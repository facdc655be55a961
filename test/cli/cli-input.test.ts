import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConnection } from '../../src/cli/api-connection.js';
import { numberFlag, readJsonBody } from '../../src/cli/cli-input.js';
import { UserError } from '../../src/cli/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'pipescaler-cli-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stdin = (text: string, isTTY = false) =>
  Object.assign(Readable.from([text]), { isTTY }) as unknown as NodeJS.ReadStream;

describe('numberFlag', () => {
  it.each([
    ['4', 4],
    [' 0.5 ', 0.5],
    ['2.5', 2.5],
    ['-1', -1],
    ['1e3', 1000],
    ['.5', 0.5],
  ])('reads %j as %s', (raw, n) => {
    expect(numberFlag('--replicas', raw)).toBe(n);
  });
  it('is undefined for an absent flag', () => {
    expect(numberFlag('--replicas', undefined)).toBeUndefined();
  });
  it.each(['', 'abc', '4x', '0x10', 'Infinity', 'NaN', '1,5'])('refuses %j naming the flag', (raw) => {
    expect(() => numberFlag('--cpu', raw)).toThrow(new UserError(`--cpu: "${raw}" is not a number`));
  });
});

describe('readJsonBody', () => {
  it('reads --file, and stdin when no file is given or the file is "-"', async () => {
    const file = join(dir, 'b.json');
    writeFileSync(file, '{"name":"x"}');
    await expect(readJsonBody(file)).resolves.toEqual({ name: 'x' });
    await expect(readJsonBody(undefined, stdin('[1]'))).resolves.toEqual([1]);
    await expect(readJsonBody('-', stdin('{"a":1}', true))).resolves.toEqual({ a: 1 });
  });
  it('names the source of a bad body', async () => {
    await expect(readJsonBody(join(dir, 'none.json'))).rejects.toThrow(/none\.json: cannot read it \(ENOENT\)/);
    await expect(readJsonBody(undefined, stdin('{oops'))).rejects.toThrow(/^stdin: not valid JSON/);
    await expect(readJsonBody(undefined, stdin('  \n'))).rejects.toThrow('stdin: the body is empty');
    await expect(readJsonBody(undefined, stdin('', true))).rejects.toThrow(
      'no body: pass --file FILE or pipe the JSON on stdin',
    );
  });
});

describe('resolveConnection', () => {
  const env = { PIPESCALER_API_URL: 'http://env', PIPESCALER_KEY_ID: 'env-id', PIPESCALER_KEY_SECRET: 'env-secret' };

  it('prefers flags, falls back to the environment', () => {
    expect(resolveConnection({}, env)).toEqual({ baseUrl: 'http://env', keyId: 'env-id', keySecret: 'env-secret' });
    const file = join(dir, 'secret');
    writeFileSync(file, 'file-secret\n');
    expect(resolveConnection({ url: 'https://flag', keyId: 'flag-id', keySecretFile: file }, env)).toEqual({
      baseUrl: 'https://flag',
      keyId: 'flag-id',
      keySecret: 'file-secret',
    });
  });

  it('says which credential is missing or wrong', () => {
    expect(() => resolveConnection({}, {})).toThrow('no API URL: pass --url URL or set PIPESCALER_API_URL');
    expect(() => resolveConnection({ url: 'ftp://x' }, env)).toThrow('API URL "ftp://x" is not an http(s) URL');
    expect(() => resolveConnection({}, { ...env, PIPESCALER_KEY_ID: '' })).toThrow('no API key id');
    expect(() => resolveConnection({}, { ...env, PIPESCALER_KEY_SECRET: undefined })).toThrow('no API key secret');
    expect(() => resolveConnection({ keySecretFile: join(dir, 'nope') }, env)).toThrow(
      /--key-secret-file .*nope: cannot read it \(ENOENT\)/,
    );
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    expect(() => resolveConnection({ keySecretFile: empty }, env)).toThrow('the file is empty');
  });
});
