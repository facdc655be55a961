// The platform's error text is bounded where the client reads it (a 3 MB error page would travel
// into every log line, Redis record and status), and the CLI prints it without terminal control.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, ApiError } from '../../src/api/index.js';
import { MAX_TEXT } from '../../src/api/internal.js';
import { describeError } from '../../src/cli/run-cli.js';
import { rawServer, type RawServer } from './raw-server.js';

const ORG = '5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b';
let server: RawServer;
let client: ApiClient;

beforeAll(async () => {
  server = await rawServer([
    (_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ status: 400, requestId: 'r'.repeat(10_000), error: `BAD_REQUEST: ${'x'.repeat(3_000_000)}` }),
      );
    },
    (_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 400, error: 'BAD_REQUEST: \u001b[2J\u001b]0;pwned\u0007wiped\nforged' }));
    },
  ]);
  client = new ApiClient({ baseUrl: server.url, keyId: 'k', keySecret: 's', retry: false });
});

afterAll(async () => {
  await client.close();
  await server.close();
});

describe('platform error texts', () => {
  it('are bounded in the ApiError: its text, its message and its request id', async () => {
    const err = (await client.listServices(ORG).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.platformError!.length).toBeLessThan(MAX_TEXT + 40);
    expect(err.message.length).toBeLessThan(MAX_TEXT + 80);
    expect(err.requestId!.length).toBeLessThan(150);
  });

  it('are printed by the CLI on one line without escape sequences', async () => {
    const err = await client.listServices(ORG).catch((e: unknown) => e);
    expect(describeError(err)).toBe('error: API_BAD_REQUEST: wiped forged');
  });
});
