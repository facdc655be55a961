// Issue 10 item 7: an answer above the client's bound (4 MiB by default, configurable) fails
// API_BAD_RESPONSE without being buffered: a declared length is refused before reading, a chunked
// body is counted while read and cut once it passes the bound.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, ApiError } from '../../src/api/index.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../../src/api/http.js';
import { ORG } from '../cloud/helpers.js';

const MB = 2 ** 20;
let server: Server | undefined;
let written = 0;

/** Answers every request with `total` bytes of JSON-looking filler, chunked or with a length,
 *  honouring backpressure, and counts what it managed to write before the client hung up. */
async function hugeServer(total: number, declared: boolean): Promise<string> {
  written = 0;
  server = createServer((_req, res) => {
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(declared ? { 'content-length': String(total) } : {}),
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (written < total) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function failure(client: ApiClient): Promise<ApiError> {
  try {
    await client.listServices(ORG, undefined, { retry: false });
  } catch (err) {
    return err as ApiError;
  } finally {
    await client.close();
  }
  throw new Error('the call succeeded');
}

describe('the response size bound', () => {
  it('the default is 4 MiB', () => {
    expect(DEFAULT_MAX_RESPONSE_BYTES).toBe(4 * MB);
  });

  it('a chunked answer of 256 MB is cut at the bound: API_BAD_RESPONSE, and the rest is never read', async () => {
    const url = await hugeServer(256 * MB, false);
    const err = await failure(new ApiClient({ baseUrl: url, keyId: 'k', keySecret: 's', timeoutMs: 60_000 }));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe('API_BAD_RESPONSE');
    expect(err.message).toMatch(/larger than 4194304 bytes/);
    // What the server got out before the socket closed: the bound plus what sat in socket buffers.
    expect(written).toBeLessThan(32 * MB);
  });

  it('a declared length above the bound is refused before its body is read', async () => {
    const url = await hugeServer(256 * MB, true);
    const err = await failure(new ApiClient({ baseUrl: url, keyId: 'k', keySecret: 's', timeoutMs: 60_000 }));
    expect(err.code).toBe('API_BAD_RESPONSE');
    expect(written).toBeLessThan(32 * MB);
  });

  it('the bound is configurable (maxResponseBytes)', async () => {
    const url = await hugeServer(8 * 1024, false);
    const err = await failure(new ApiClient({ baseUrl: url, keyId: 'k', keySecret: 's', maxResponseBytes: 4 * 1024 }));
    expect(err.code).toBe('API_BAD_RESPONSE');
    expect(err.message).toMatch(/larger than 4096 bytes/);
  });
});
