// A rediss:// URL against a Redis without TLS: each attempt times out in a handshake the server
// never answers, which used to read as a Redis that is down (no error at all). The connection now
// asks once in clear text, and a Redis that answers is named as the cause: a TLS mismatch.
import { createServer, type Server } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersWithoutTls, connectRedis, redisProblem } from '../../../src/daemon/store/redis-connection.js';

// a port where nothing listens: a server opened and closed
let closedPort: number;
// a server that accepts and never says anything
let silent: Server;
let silentPort: number;
const sockets: Socket[] = [];

beforeAll(async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentPort = (silent.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

describe('rediss:// against a Redis without TLS', () => {
  it('reports the connection down with the TLS mismatch as its cause', async () => {
    const causes: (string | undefined)[] = [];
    const gotCause = new Promise<void>((resolve) => {
      const redis = connectRedis(
        'rediss://127.0.0.1:6379',
        (ready, cause) => {
          causes.push(cause);
          if (!ready && cause !== undefined) {
            redis.disconnect();
            resolve();
          }
        },
        { connectTimeout: 500 },
      );
    });
    await gotCause;
    expect(causes.at(-1)).toBe(
      'TLS handshake failed (127.0.0.1:6379 answers without TLS): a rediss:// URL needs a server with TLS; use redis:// for one without',
    );
  }, 20_000);

  it('asks in clear text: a Redis answers, a closed port or a silent server does not', async () => {
    expect(await answersWithoutTls('127.0.0.1', 6379)).toBe(true);
    expect(await answersWithoutTls('127.0.0.1', closedPort)).toBe(false);
    expect(await answersWithoutTls('127.0.0.1', silentPort, 300)).toBe(false);
  });

  it('an ordinary outage is no problem of the settings; a refused password is', () => {
    expect(redisProblem(new Error('connect ECONNREFUSED 127.0.0.1:6379'))).toBeNull();
    expect(redisProblem(new Error('WRONGPASS invalid username-password pair'))).toMatch(/^authentication refused/);
  });
});
