// The embedded cloud answers valid under the platform's published contract. Every operation it
// serves is called over real HTTP (each kind of pipe, reads and changes, every CRUD step, the 400s
// the contract declares), and each raw answer is checked by an independent OpenAPI response
// validator (openapi-backend, ajv underneath) against the published document's schemas:
// fixtures/platform-openapi.json is that document cut to the operations served here, with the
// paths as the platform serves them to us (pipes, stack) and no prose. Our own zod schemas play no
// part, so a member our schemas allow and the platform's do not (a null where it says integer, a
// service without a member it requires) is caught.
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS, type Operation } from '../../src/api/index.js';
import type { EmbeddedCloud } from '../../src/cloud/index.js';
import { ALERT, DASHBOARD, PIPE, RPE, SVC, demoCloud, op, scalingPath, type Answer } from './helpers.js';

const contract = JSON.parse(
  readFileSync(new URL('../api/fixtures/platform-openapi.json', import.meta.url), 'utf8'),
) as Document;
const api = new OpenAPIBackend({ definition: contract, quick: true, validate: true });
let cloud: EmbeddedCloud;
const checked = new Map<Operation, Set<number>>();

beforeAll(async () => {
  await api.init();
  cloud = await demoCloud();
});
afterAll(() => cloud.close());

/** The answer's body is valid for its operation and status under the published contract. */
function expectValid(name: Operation, a: Answer, status = 200): void {
  expect(a.status, a.text).toBe(status);
  const r = api.validateResponse(JSON.parse(a.text) as unknown, name, a.status);
  expect(r.errors ?? [], `${name} ${a.status}: ${a.text.slice(0, 400)}`).toEqual([]);
  checked.set(name, (checked.get(name) ?? new Set()).add(status));
}

const S = { serviceId: SVC.analytics };
const tile = {
  name: 'Lag',
  x: 0,
  y: 0,
  w: 6,
  h: 3,
  config: { displayType: 'line', sourceId: '0a0000000000000000000001', select: [{ aggFn: 'count' }] },
};

describe('the embedded cloud under the published contract', () => {
  it('services: the list, every service with the members the contract requires', async () => {
    expectValid('listServices', await op(cloud, 'listServices', {}));
  });

  it('pipes: reads and changes of stream and object-storage pipes, the 400s of the others', async () => {
    // reads: an empty scaling PATCH, of each kind (stream, object storage, completed, stopped)
    for (const [pipe, svc] of [
      [PIPE.orders, SVC.analytics],
      [PIPE.nightly, SVC.analytics],
      [PIPE.clickstream, SVC.analytics],
      [PIPE.backfill, SVC.staging],
      [PIPE.legacy, SVC.staging],
    ] as const)
      expectValid('scalePipe', await op(cloud, 'scalePipe', scalingPath(pipe, svc), { body: {} }));
    // changes
    expectValid('scalePipe', await op(cloud, 'scalePipe', scalingPath(PIPE.orders), { body: { replicas: 4 } }));
    expectValid(
      'scalePipe',
      await op(cloud, 'scalePipe', scalingPath(PIPE.orders), {
        body: { replicaCpuMillicores: 1000, replicaMemoryGb: 4 },
      }),
    );
    expectValid('scalePipe', await op(cloud, 'scalePipe', scalingPath(PIPE.nightly), { body: { concurrency: 8 } }));
    // refused: a database pipe, a value out of range, the wrong kind's field
    expectValid('scalePipe', await op(cloud, 'scalePipe', scalingPath(PIPE.usersCdc), { body: { replicas: 2 } }), 400);
    expectValid('scalePipe', await op(cloud, 'scalePipe', scalingPath(PIPE.orders), { body: { replicas: 99 } }), 400);
    expectValid('scalePipe', await op(cloud, 'scalePipe', scalingPath(PIPE.nightly), { body: { replicas: 2 } }), 400);
  });

  it('reverse private endpoints: ready and provisioning', async () => {
    for (const [serviceId, id] of [
      [SVC.analytics, RPE.ready],
      [SVC.staging, RPE.provisioning],
    ] as const)
      expectValid(
        'getReversePrivateEndpoint',
        await op(cloud, 'getReversePrivateEndpoint', { serviceId, reversePrivateEndpointId: id }),
      );
  });

  it('dashboards, alerts and sources: every step of their life', async () => {
    expectValid('listDashboards', await op(cloud, 'listDashboards', S));
    expectValid('getDashboard', await op(cloud, 'getDashboard', { ...S, dashboardId: DASHBOARD }));
    const created = await op(cloud, 'createDashboard', S, {
      body: { name: 'Ops', tiles: [{ ...tile, id: 't1' }], tags: ['a'] },
    });
    expectValid('createDashboard', created);
    const dashboardId = (created.json?.result as { id: string }).id;
    expectValid(
      'updateDashboard',
      await op(
        cloud,
        'updateDashboard',
        { ...S, dashboardId },
        { body: { name: 'Ops 2', tiles: [{ ...tile, id: 't1' }] } },
      ),
    );
    expectValid('createDashboard', await op(cloud, 'createDashboard', S, { body: { name: '', tiles: [] } }), 400);

    expectValid('listAlerts', await op(cloud, 'listAlerts', S));
    expectValid('getAlert', await op(cloud, 'getAlert', { ...S, alertId: ALERT }));
    const alert = {
      source: 'tile',
      dashboardId,
      tileId: 't1',
      interval: '5m',
      threshold: 100,
      thresholdType: 'above',
      channel: { type: 'webhook', webhookId: 'hook-1' },
      name: 'Lag high',
    };
    const made = await op(cloud, 'createAlert', S, { body: alert });
    expectValid('createAlert', made);
    const alertId = (made.json?.result as { id: string }).id;
    expectValid(
      'updateAlert',
      await op(cloud, 'updateAlert', { ...S, alertId }, { body: { ...alert, threshold: 50 } }),
    );
    expectValid('createAlert', await op(cloud, 'createAlert', S, { body: { ...alert, interval: 'often' } }), 400);
    expectValid('deleteAlert', await op(cloud, 'deleteAlert', { ...S, alertId }));
    expectValid('deleteDashboard', await op(cloud, 'deleteDashboard', { ...S, dashboardId }));

    expectValid('listSources', await op(cloud, 'listSources', S));
  });

  it('the client still takes what the live API sends beyond the contract: nulls and quantity strings', async () => {
    // the cloud's own answer, with the scaling members as the live API may send them
    const live = JSON.parse((await op(cloud, 'scalePipe', scalingPath(PIPE.orders), { body: {} })).text) as {
      result: { scaling: unknown };
    };
    live.result.scaling = { replicas: 2, concurrency: null, replicaCpuMillicores: '500m', replicaMemoryGb: '2Gi' };
    expect(api.validateResponse(live, 'scalePipe', 200).errors?.length).toBeGreaterThan(0);
    const parsed = ENDPOINTS.scalePipe.response.parse(live);
    expect(parsed.result.scaling).toMatchObject({ replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 });
  });

  it('checked every operation the cloud serves', () => {
    const ops = Object.values(contract.paths ?? {}).flatMap((item) =>
      Object.values(item ?? {}).flatMap((o) =>
        typeof o === 'object' && o !== null && 'operationId' in o ? [String(o.operationId)] : [],
      ),
    );
    expect([...checked.keys()].sort()).toEqual(ops.sort());
  });
});
