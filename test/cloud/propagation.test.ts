// Propagation: a scaling change the cloud answers at once but carries out after a delay (per pipe,
// per kind, or the default; `never` for a stuck one), on the cloud's injected clock; the `stuck` and
// `late` faults. The clock is stepped, nothing sleeps on it.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/index.js';
import { demoCredentials, type EmbeddedCloud, type Fixtures } from '../../src/cloud/index.js';
import { call, DEMO, demoCloud, expectError, expectOk, op, PIPE, scalingPath } from './helpers.js';

const T0 = Date.parse('2026-11-22T10:00:00Z');
let clock = T0;
const now = () => clock;
let cloud: EmbeddedCloud | undefined;
afterEach(async () => {
  await cloud?.close();
  cloud = undefined;
  clock = T0;
});

const ADMIN = 'admin-token-for-tests';
const S = 1_000;

async function start(
  fixtures: Partial<Fixtures> = {},
  options: { random?: () => number } = {},
): Promise<EmbeddedCloud> {
  cloud = await demoCloud({ fixtures: { ...DEMO, ...fixtures }, now, adminToken: ADMIN, ...options });
  return cloud;
}
/** The pipe's scaling as a read (an empty PATCH) answers it now. */
async function read(c: EmbeddedCloud, pipe: string = PIPE.orders) {
  return expectOk('scalePipe', await op(c, 'scalePipe', scalingPath(pipe), { body: {} })).scaling;
}
async function scale(c: EmbeddedCloud, body: unknown, pipe: string = PIPE.orders) {
  return expectOk('scalePipe', await op(c, 'scalePipe', scalingPath(pipe), { body })).scaling;
}

describe('propagation: a change takes effect after its delay', () => {
  it('by default at once, as before', async () => {
    const c = await start();
    expect((await scale(c, { replicas: 3 })).replicas).toBe(3);
    expect(c.store.pendingChanges(PIPE.orders)).toEqual([]);
  });

  it("per kind: the answer and every read show the old values until the kind's delay has passed", async () => {
    const c = await start({ propagation: { stream: '30s', objectStorage: 180_000 } });
    expect((await scale(c, { replicas: 3, replicaCpuMillicores: 750 })).replicas).toBe(2);
    expect(c.store.pendingChanges(PIPE.orders)).toEqual([
      { values: { replicas: 3, replicaCpuMillicores: 750 }, requestedAt: T0, effectiveAt: T0 + 30 * S },
    ]);
    clock += 30 * S - 1;
    expect(await read(c)).toMatchObject({ replicas: 2, replicaCpuMillicores: 500 });
    expect(c.store.pipe(PIPE.orders)?.scaling.replicas).toBe(2);
    clock += 1;
    expect(await read(c)).toMatchObject({ replicas: 3, replicaCpuMillicores: 750 });
    expect(c.store.pendingChanges(PIPE.orders)).toEqual([]);
    // an object-storage pipe takes its own kind's
    expect((await scale(c, { concurrency: 4 }, PIPE.nightly)).concurrency).not.toBe(4);
    clock += 180 * S;
    expect(c.store.pipe(PIPE.nightly)?.scaling.concurrency).toBe(4);
  });

  it('the store shows what the platform holds now, without a read', async () => {
    const c = await start({ propagation: { default: '1m' } });
    await scale(c, { replicas: 5 });
    clock += 60 * S;
    expect(c.store.pipe(PIPE.orders)?.scaling.replicas).toBe(5);
  });

  it("per pipe: the pipe's own fixture member, and `pipes` of the settings, replace its kind's", async () => {
    const fixtures = structuredClone(DEMO);
    const pipes = fixtures.organizations[0]!.services[0]!.pipes;
    const orders = pipes.find((p) => p.id === PIPE.orders)!;
    Object.assign(orders, { propagation: '3m' });
    const c = await start({ ...fixtures, propagation: { stream: '30s', pipes: { [PIPE.clickstream]: '10s' } } });
    expect(c.propagation().pipes).toEqual({ [PIPE.orders]: 180_000, [PIPE.clickstream]: 10_000 });
    // the member is the cloud's, not the pipe's: it is not answered
    expect(expectOk('scalePipe', await op(c, 'scalePipe', scalingPath(PIPE.orders), { body: {} }))).not.toHaveProperty(
      'propagation',
    );
    await scale(c, { replicas: 4 });
    await scale(c, { replicaMemoryGb: 4 }, PIPE.clickstream);
    clock += 30 * S;
    expect(c.store.pipe(PIPE.clickstream)?.scaling.replicaMemoryGb).toBe(4);
    expect(c.store.pipe(PIPE.orders)?.scaling.replicas).toBe(2);
    clock += 150 * S;
    expect(c.store.pipe(PIPE.orders)?.scaling.replicas).toBe(4);
  });

  it('reads: transient answers 0 CPU and null memory while a change is on its way, which the client reads as not known', async () => {
    const c = await start({ propagation: { stream: '1m', reads: 'transient' } });
    expect(await scale(c, { replicas: 3 })).toEqual({
      replicas: 2,
      replicaCpuMillicores: 0,
      replicaMemoryGb: null,
    });
    const creds = demoCredentials(DEMO);
    const client = new ApiClient({ baseUrl: c.url, ...creds, retry: false });
    try {
      const ref = {
        organizationId: creds.organizationId,
        serviceId: c.store.pipe(PIPE.orders)!.serviceId,
        pipeId: PIPE.orders,
      };
      expect((await client.scalePipe(ref, {})).result.scaling).toMatchObject({
        replicas: 2,
        replicaCpuMillicores: null,
      });
      clock += 60 * S;
      expect((await client.scalePipe(ref, {})).result.scaling).toMatchObject({
        replicas: 3,
        replicaCpuMillicores: 500,
        replicaMemoryGb: 2,
      });
    } finally {
      await client.close();
    }
  });

  it('never: a stuck pipe keeps its old values however long one waits', async () => {
    const c = await start({ propagation: { pipes: { [PIPE.orders]: 'never' } } });
    await scale(c, { replicas: 6 });
    clock += 86_400 * S;
    expect((await read(c)).replicas).toBe(2);
    expect(c.store.pendingChanges(PIPE.orders)).toMatchObject([{ values: { replicas: 6 }, effectiveAt: Infinity }]);
  });

  it('the last request wins: a later change overtakes the fields of one still on its way', async () => {
    const c = await start({ propagation: { stream: '2m' } });
    await scale(c, { replicas: 5, replicaCpuMillicores: 1000 });
    clock += 30 * S;
    // back to what is in effect: still a change, overtaking the pending replicas
    c.setPropagation({ stream: '10s' });
    await scale(c, { replicas: 2 });
    expect(c.store.pendingChanges(PIPE.orders)).toEqual([
      { values: { replicas: 2 }, requestedAt: T0 + 30 * S, effectiveAt: T0 + 40 * S },
      { values: { replicaCpuMillicores: 1000 }, requestedAt: T0, effectiveAt: T0 + 120 * S },
    ]);
    clock += 90 * S;
    expect(await read(c)).toMatchObject({ replicas: 2, replicaCpuMillicores: 1000 });
    // asking for what is already on its way adds nothing
    await scale(c, { replicas: 7 });
    await scale(c, { replicas: 7 });
    expect(c.store.pendingChanges(PIPE.orders)).toHaveLength(1);
  });

  it('a change with no delay is in effect at once and overtakes what was pending', async () => {
    const c = await start({ propagation: { stream: '1m' } });
    await scale(c, { replicas: 5 });
    c.setPropagation({});
    expect((await scale(c, { replicas: 3 })).replicas).toBe(3);
    clock += 60 * S;
    expect((await read(c)).replicas).toBe(3);
  });

  it('refused requests (400, 404) take nothing', async () => {
    const c = await start({ propagation: { stream: '1m' } });
    expectError(await op(c, 'scalePipe', scalingPath(PIPE.orders), { body: { replicas: 11 } }), 400, /replicas/);
    expect(c.store.pendingChanges(PIPE.orders)).toEqual([]);
  });
});

describe('propagation settings: fixtures, setPropagation and /admin/propagation', () => {
  it('GET and PUT /admin/propagation; a bad one is a 400 naming the field and changes nothing', async () => {
    const c = await start();
    const auth = `Bearer ${ADMIN}`;
    const put = await call(c, 'PUT', '/admin/propagation', {
      auth,
      body: { stream: '3m', objectStorage: 30_000, reads: 'transient', pipes: { [PIPE.nightly]: 'never' } },
    });
    expect(put.status).toBe(200);
    const want = {
      default: 0,
      stream: 180_000,
      objectStorage: 30_000,
      reads: 'transient',
      pipes: { [PIPE.nightly]: 'never' },
    };
    expect(put.json?.result).toEqual(want);
    expect((await call(c, 'GET', '/admin/propagation', { auth })).json?.result).toEqual(want);
    expectError(
      await call(c, 'PUT', '/admin/propagation', { auth, body: { stream: 'soon' } }),
      400,
      'BAD_REQUEST: stream: must be a duration like 500ms, 10s or 1m, or never',
    );
    expectError(
      await call(c, 'PUT', '/admin/propagation', { auth, body: { reads: 'new' } }),
      400,
      /^BAD_REQUEST: reads: /,
    );
    expectError(await call(c, 'PUT', '/admin/propagation', { auth, body: { pipes: { orders: '1m' } } }), 400, /pipes/);
    expect(c.propagation()).toEqual(want);
    expectError(await call(c, 'GET', '/admin/propagation', { auth: null }), 401, /^UNAUTHORIZED/);
  });

  it('fixtures are checked: a bad delay names its field', async () => {
    await expect(start({ propagation: { default: '-1s' } })).rejects.toThrow(/propagation\.default/);
    await expect(start({ propagation: { stream: 'never', kafka: '1m' } as never })).rejects.toThrow(
      /unknown member kafka/,
    );
  });
});

describe('faults: stuck and late', () => {
  it('stuck: the change is answered 200 and never takes effect; a request without the fault replaces it', async () => {
    const draws = [0.1]; // stuck: 0.5 -> stuck; later draws 0.99 -> not
    const c = await start({}, { random: () => draws.shift() ?? 0.99 });
    c.setFaults({ scalePipe: { stuck: 0.5 } });
    expect((await scale(c, { replicas: 4 })).replicas).toBe(2);
    clock += 86_400 * S;
    expect((await read(c)).replicas).toBe(2);
    expect(c.stats().faults).toEqual({ stuck: 1 });
    expect((await scale(c, { replicas: 5 })).replicas).toBe(5);
    expect(c.store.pendingChanges(PIPE.orders)).toEqual([]);
  });

  it('late: a request held until its client gave up is carried out anyway', async () => {
    const c = await start({}, { random: () => 0 });
    c.setFaults({ scalePipe: { late: { probability: 1, maxMs: 60_000 } } });
    const creds = demoCredentials(DEMO);
    const client = new ApiClient({ baseUrl: c.url, ...creds, retry: false, timeoutMs: 100, ownPool: true });
    const ref = {
      organizationId: creds.organizationId,
      serviceId: c.store.pipe(PIPE.orders)!.serviceId,
      pipeId: PIPE.orders,
    };
    try {
      await expect(client.scalePipe(ref, { replicas: 8 })).rejects.toMatchObject({ code: 'API_TIMEOUT' });
      expect(c.store.pipe(PIPE.orders)?.scaling.replicas).toBe(2);
    } finally {
      await client.close({ force: true }); // the client gives up: its connection closes
    }
    await c.settled();
    expect(c.store.pipe(PIPE.orders)?.scaling.replicas).toBe(8);
    expect(c.stats().faults).toEqual({ late: 1 });
  });

  it('late: a client still waiting after maxMs gets its answer, late', async () => {
    const c = await start({}, { random: () => 0 });
    c.setFaults({ scalePipe: { late: { probability: 1, maxMs: 20 } } });
    expect((await scale(c, { replicas: 9 })).replicas).toBe(9);
    expectError(await op(c, 'scalePipe', scalingPath(PIPE.orders), { body: { replicas: 0 } }), 400, /replicas/);
    await c.settled();
  });

  it('late with propagation: the delay runs from when the held request is carried out', async () => {
    const c = await start({ propagation: { stream: '30s' } }, { random: () => 0 });
    c.setFaults({ scalePipe: { late: { probability: 1, maxMs: 20 } } });
    clock += 5 * S; // the clock moves while the request is held
    const p = scale(c, { replicas: 3 });
    expect((await p).replicas).toBe(2);
    expect(c.store.pendingChanges(PIPE.orders)[0]?.effectiveAt).toBe(T0 + 35 * S);
  });
});
