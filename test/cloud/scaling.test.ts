import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SCALING_LIMITS, type ScalingField } from '../../src/api/index.js';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { demoCloud, DEMO, expectError, expectOk, op, PIPE, scalingPath, SVC } from './helpers.js';

let cloud: EmbeddedCloud;
let clock = Date.parse('2026-11-22T10:00:00Z');
const now = () => clock;

beforeEach(async () => {
  cloud = await demoCloud({ now });
});
afterEach(() => cloud.close());

const scale = (pipe: string, body: unknown, svc: string = SVC.analytics) =>
  op(cloud, 'scalePipe', scalingPath(pipe, svc), { body });

// A pipe of the right kind for each field, and its service.
const FIELD_PIPE: Record<ScalingField, [string, string]> = {
  replicas: [PIPE.orders, SVC.analytics],
  replicaCpuMillicores: [PIPE.orders, SVC.analytics],
  replicaMemoryGb: [PIPE.clickstream, SVC.analytics],
  concurrency: [PIPE.nightly, SVC.analytics],
};

describe('PATCH .../pipes/{pipeId}/scaling: the platform ranges of SCALING_LIMITS', () => {
  for (const [field, { min, max, integer }] of Object.entries(SCALING_LIMITS) as [
    ScalingField,
    (typeof SCALING_LIMITS)[ScalingField],
  ][]) {
    const [pipe, svc] = FIELD_PIPE[field];
    const below = integer ? min - 1 : min - 0.01;
    const above = integer ? max + 1 : max + 0.01;
    it(`${field}: ${min} and ${max} are accepted, ${below} and ${above} are 400s naming the field`, async () => {
      expect(expectOk('scalePipe', await scale(pipe, { [field]: min }, svc)).scaling[field]).toBe(min);
      expect(expectOk('scalePipe', await scale(pipe, { [field]: max }, svc)).scaling[field]).toBe(max);
      const msg = `BAD_REQUEST: ${field} must be between ${min} and ${max}`;
      expectError(await scale(pipe, { [field]: below }, svc), 400, msg);
      expectError(await scale(pipe, { [field]: above }, svc), 400, msg);
    });
  }

  it('refuses a non-integer replicas and a string', async () => {
    expectError(await scale(PIPE.orders, { replicas: 2.5 }), 400, 'BAD_REQUEST: replicas must be an integer');
    expectError(
      await scale(PIPE.orders, { replicaCpuMillicores: 500.5 }),
      400,
      'BAD_REQUEST: replicaCpuMillicores must be an integer',
    );
    expectError(await scale(PIPE.orders, { replicas: '3' }), 400, 'BAD_REQUEST: replicas must be a number');
  });

  it('refuses an unknown member, naming it', async () => {
    expectError(await scale(PIPE.orders, { replicas: 2, replicaz: 3 }), 400, 'BAD_REQUEST: unknown member replicaz');
  });

  it('refuses a body that is not an object', async () => {
    expectError(await scale(PIPE.orders, [1, 2]), 400, 'BAD_REQUEST: body must be an object');
    expectError(await scale(PIPE.orders, null), 400, 'BAD_REQUEST: body must be an object');
  });
});

describe('scaling: kinds and states', () => {
  it('a database pipe is scaled service-wide: 400', async () => {
    expectError(await scale(PIPE.usersCdc, { replicas: 2 }), 400, /^BAD_REQUEST: .*scaled service-wide/);
  });

  it('fields of another kind are 400s naming them', async () => {
    expectError(
      await scale(PIPE.orders, { concurrency: 3 }),
      400,
      /^BAD_REQUEST: concurrency does not apply to a stream pipe/,
    );
    expectError(
      await scale(PIPE.nightly, { replicas: 2, replicaMemoryGb: 1 }),
      400,
      /^BAD_REQUEST: replicas, replicaMemoryGb do not apply to an object-storage pipe/,
    );
  });

  it('a Completed pipe cannot be modified: 400', async () => {
    expectError(
      await scale(PIPE.backfill, { concurrency: 5 }, SVC.staging),
      400,
      'BAD_REQUEST: Pipe is Completed and cannot be modified',
    );
  });

  it('a pipe of an idle service answers 424, and of a stopped one too', async () => {
    expectError(
      await scale(PIPE.archive, { replicas: 2 }, SVC.archive),
      424,
      'FAILED_DEPENDENCY: Service is not running. Current state: idle',
    );
    cloud.store.service(SVC.analytics)!.service.state = 'stopped';
    expectError(
      await scale(PIPE.orders, { replicas: 3 }),
      424,
      'FAILED_DEPENDENCY: Service is not running. Current state: stopped',
    );
  });

  it('a state set by a test through the store is honored', async () => {
    cloud.store.pipe(PIPE.orders)!.state = 'Completed';
    expectError(await scale(PIPE.orders, { replicas: 3 }), 400, /Completed/);
  });

  it('an empty or all-null PATCH answers every pipe as it is, whatever its kind and state', async () => {
    const all = DEMO.organizations[0]!.services.flatMap((s) => s.pipes.map((p) => [p.id, s.id] as const));
    expect(all).toHaveLength(10);
    for (const [pipe, svc] of all) {
      const before = structuredClone(cloud.store.pipe(pipe));
      clock += 1000;
      const empty = expectOk('scalePipe', await scale(pipe, {}, svc));
      const nulls = expectOk(
        'scalePipe',
        await scale(
          pipe,
          { replicas: null, concurrency: null, replicaCpuMillicores: null, replicaMemoryGb: null },
          svc,
        ),
      );
      const noBody = expectOk('scalePipe', await op(cloud, 'scalePipe', scalingPath(pipe, svc)));
      for (const r of [empty, nulls, noBody]) {
        expect(r.id).toBe(pipe);
        expect(r.serviceId).toBe(svc);
        expect(r.updatedAt).toBe(before!.updatedAt);
        // as stored, less the fields the pipe's kind does not take: the contract has no null there
        expect(r.scaling).toEqual(Object.fromEntries(Object.entries(before!.scaling).filter(([, v]) => v !== null)));
        expect(r.state).toBe(before!.state);
      }
    }
  });

  it('a change answers the new scaling and moves updatedAt to the injected clock', async () => {
    clock = Date.parse('2026-11-22T11:00:00Z');
    const r = expectOk(
      'scalePipe',
      await scale(PIPE.orders, { replicas: 4, replicaCpuMillicores: 1000, replicaMemoryGb: null }),
    );
    expect(r.scaling).toEqual({ replicas: 4, replicaCpuMillicores: 1000, replicaMemoryGb: 2 });
    expect(r.updatedAt).toBe('2026-11-22T11:00:00.000Z');
    clock += 60_000;
    // The same values again change nothing, so updatedAt stays.
    const same = expectOk('scalePipe', await scale(PIPE.orders, { replicas: 4 }));
    expect(same.updatedAt).toBe('2026-11-22T11:00:00.000Z');
    const obj = expectOk('scalePipe', await scale(PIPE.nightly, { concurrency: 0 }));
    expect(obj.scaling.concurrency).toBe(0);
    expect(obj.updatedAt).toBe('2026-11-22T11:01:00.000Z');
  });

  it("a Stopped pipe of a running service takes a change (skipping it is the policy's call)", async () => {
    expect(expectOk('scalePipe', await scale(PIPE.legacy, { replicas: 2 }, SVC.staging)).scaling.replicas).toBe(2);
  });
});

describe('scaling quirks of the live API (off by default)', () => {
  it('quantityStrings answers cpu and memory as Kubernetes quantities', async () => {
    const q = await startCloud({ fixtures: { ...DEMO, quirks: { quantityStrings: true } }, rateLimit: false });
    try {
      const r = await op(q, 'scalePipe', scalingPath(PIPE.orders), { body: { replicaMemoryGb: 0.5 } });
      expect(expectOk('scalePipe', r).scaling).toEqual({
        replicas: 2,
        replicaCpuMillicores: '500m',
        replicaMemoryGb: '512Mi',
      });
      // The Pipe schema of src/api normalizes them back.
      expect(expectOk('scalePipe', r)).toBeDefined();
      const again = await op(q, 'scalePipe', scalingPath(PIPE.orders), { body: { replicaMemoryGb: 2 } });
      expect(expectOk('scalePipe', again).scaling.replicaMemoryGb).toBe('2Gi');
    } finally {
      await q.close();
    }
  });

  it('transientZeroMs answers 0/null for cpu and memory for that long after a change', async () => {
    let t = 1_000_000;
    const q = await startCloud({
      fixtures: { ...DEMO, quirks: { transientZeroMs: 5000 } },
      rateLimit: false,
      now: () => t,
    });
    try {
      const before = await op(q, 'scalePipe', scalingPath(PIPE.orders), { body: {} });
      expect(expectOk('scalePipe', before).scaling.replicaCpuMillicores).toBe(500);
      const r = await op(q, 'scalePipe', scalingPath(PIPE.orders), { body: { replicaCpuMillicores: 750 } });
      expect(expectOk('scalePipe', r).scaling).toMatchObject({
        replicas: 2,
        replicaCpuMillicores: 0,
        replicaMemoryGb: null,
      });
      t += 4999;
      expect(
        expectOk('scalePipe', await op(q, 'scalePipe', scalingPath(PIPE.orders), { body: {} })).scaling
          .replicaCpuMillicores,
      ).toBe(0);
      t += 1;
      expect(
        expectOk('scalePipe', await op(q, 'scalePipe', scalingPath(PIPE.orders), { body: {} })).scaling,
      ).toMatchObject({ replicaCpuMillicores: 750, replicaMemoryGb: 2 });
    } finally {
      await q.close();
    }
  });
});
