// The chaos observer (bench/chaos/observer.ts) in front of a plain HTTP server: each replica's
// path prefix is taken off before the request goes on, and every request is kept with its replica.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { replicaUrl, splitReplica, startObserver, type Observer } from '../../bench/chaos/observer.js';

describe('chaos observer: which replica sent what', () => {
  it('gives each replica a prefix of its URL and reads it back', () => {
    expect(replicaUrl('http://127.0.0.1:9/', 'a#2')).toBe('http://127.0.0.1:9/replica/a%232');
    expect(splitReplica('/replica/a%232/v1/organizations/o?x=1')).toEqual({
      replica: 'a#2',
      url: '/v1/organizations/o?x=1',
    });
    expect(splitReplica('/v1/organizations/o')).toEqual({ replica: undefined, url: '/v1/organizations/o' });
  });

  let observer: Observer | undefined;
  const upstream = createServer((req, res) => {
    req.resume();
    res.writeHead(req.url?.startsWith('/v1/limited') ? 429 : 200, { 'content-type': 'text/plain' });
    res.end(req.url);
  });
  afterEach(async () => {
    await observer?.close();
    observer = undefined;
    if (upstream.listening) await new Promise<void>((r) => upstream.close(() => r()));
  });

  it('forwards without the prefix and keeps every request with its replica, key, path and status', async () => {
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const port = (upstream.address() as { port: number }).port;
    observer = await startObserver(`http://127.0.0.1:${port}`);
    const auth = { authorization: `Basic ${Buffer.from('key-b:secret').toString('base64')}` };
    const a = await fetch(`${replicaUrl(observer.url, 'b')}/v1/organizations/o?x=1`, { headers: auth });
    expect(await a.text()).toBe('/v1/organizations/o?x=1');
    const b = await fetch(`${replicaUrl(observer.url, 'a#2')}/v1/limited`, { method: 'POST', body: '{}' });
    expect(b.status).toBe(429);
    expect(observer.requests).toEqual([
      { at: expect.any(Number), replica: 'b', keyId: 'key-b', method: 'GET', path: '/v1/organizations/o', status: 200 },
      { at: expect.any(Number), replica: 'a#2', keyId: undefined, method: 'POST', path: '/v1/limited', status: 429 },
    ]);
    expect(observer.limited).toMatchObject([{ replica: 'a#2', path: '/v1/limited' }]);
  });
});
