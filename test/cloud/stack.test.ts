import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCloud } from '../../src/cloud/index.js';
import { ALERT, DASHBOARD, demoCloud, expectError, expectOk, op, SVC } from './helpers.js';

let cloud: EmbeddedCloud;
let clock = 0;
beforeEach(async () => {
  clock = Date.parse('2026-11-22T09:00:00Z');
  cloud = await demoCloud({ now: () => clock });
});
afterEach(() => cloud.close());

const S = { serviceId: SVC.analytics };
const tile = (over: Record<string, unknown> = {}) => ({
  name: 'Lag',
  x: 0,
  y: 0,
  w: 6,
  h: 3,
  config: { displayType: 'line' },
  ...over,
});
const dashboard = (over: Record<string, unknown> = {}) => ({ name: 'Ops', tiles: [tile()], ...over });
const alertBody = (dashboardId: string, tileId: string, over: Record<string, unknown> = {}) => ({
  source: 'tile',
  dashboardId,
  tileId,
  interval: '5m',
  threshold: 100,
  thresholdType: 'above',
  channel: { type: 'webhook', webhookId: 'hook-1' },
  name: 'Lag high',
  ...over,
});

describe('dashboards', () => {
  it('lists the fixtures dashboard', async () => {
    const list = expectOk('listDashboards', await op(cloud, 'listDashboards', S));
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: DASHBOARD, name: 'Pipe throughput', tags: ['pipes'] });
    expect(list[0]!.tiles.map((t) => t.id)).toEqual(['rows-per-second', 'error-count']);
  });

  it('create, get, update (full replace), delete', async () => {
    const created = expectOk(
      'createDashboard',
      await op(cloud, 'createDashboard', S, { body: dashboard({ tiles: [tile(), tile({ id: 'mine', x: 6 })] }) }),
    );
    expect(created.id).toMatch(/^[0-9a-f]{24}$/);
    expect(created.tiles[0]!.id).toMatch(/^[0-9a-f]{24}$/);
    expect(created.tiles[1]!.id).toBe('mine');
    expect(created).toMatchObject({
      name: 'Ops',
      tags: [],
      createdAt: '2026-11-22T09:00:00.000Z',
      updatedAt: '2026-11-22T09:00:00.000Z',
    });
    const got = expectOk('getDashboard', await op(cloud, 'getDashboard', { ...S, dashboardId: created.id }));
    expect(got).toEqual(created);
    expect(expectOk('listDashboards', await op(cloud, 'listDashboards', S))).toHaveLength(2);

    clock += 60_000;
    const updated = expectOk(
      'updateDashboard',
      await op(
        cloud,
        'updateDashboard',
        { ...S, dashboardId: created.id },
        { body: { name: 'Ops 2', tiles: [], tags: ['a'] } },
      ),
    );
    expect(updated).toMatchObject({
      id: created.id,
      name: 'Ops 2',
      tiles: [],
      tags: ['a'],
      createdAt: created.createdAt,
      updatedAt: '2026-11-22T09:01:00.000Z',
    });

    const del = await op(cloud, 'deleteDashboard', { ...S, dashboardId: created.id });
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ status: 200, requestId: expect.any(String) });
    expectOk('deleteDashboard', del);
    expectError(
      await op(cloud, 'getDashboard', { ...S, dashboardId: created.id }),
      404,
      'NOT_FOUND: Unknown dashboard',
    );
    expectError(
      await op(cloud, 'deleteDashboard', { ...S, dashboardId: created.id }),
      404,
      'NOT_FOUND: Unknown dashboard',
    );
  });

  it.each([
    ['tile too wide', dashboard({ tiles: [tile({ w: 25 })] }), 'BAD_REQUEST: tiles[0].w: must be at most 24'],
    ['tile x too far', dashboard({ tiles: [tile(), tile({ x: 24 })] }), 'BAD_REQUEST: tiles[1].x: must be at most 23'],
    ['tile w zero', dashboard({ tiles: [tile({ w: 0 })] }), 'BAD_REQUEST: tiles[0].w: must be at least 1'],
    ['negative y', dashboard({ tiles: [tile({ y: -1 })] }), 'BAD_REQUEST: tiles[0].y: must be at least 0'],
    ['no name', { tiles: [] }, 'BAD_REQUEST: name: is required'],
    ['no tiles', { name: 'x' }, 'BAD_REQUEST: tiles: is required'],
    ['name too long', dashboard({ name: 'n'.repeat(1025) }), 'BAD_REQUEST: name: must be at most 1024 characters'],
    [
      'too many tiles',
      dashboard({ tiles: Array.from({ length: 501 }, () => tile()) }),
      'BAD_REQUEST: tiles: must have at most 500 items',
    ],
    ['tag too long', dashboard({ tags: ['t'.repeat(33)] }), 'BAD_REQUEST: tags[0]: must be at most 32 characters'],
    [
      'tile id too long',
      dashboard({ tiles: [tile({ id: 'i'.repeat(37) })] }),
      'BAD_REQUEST: tiles[0].id: must be at most 36 characters',
    ],
    [
      'duplicate tile id',
      dashboard({ tiles: [tile({ id: 'a' }), tile({ id: 'a' })] }),
      'BAD_REQUEST: tiles[1].id: duplicate tile id a',
    ],
    ['unknown member', dashboard({ colour: 'red' }), 'BAD_REQUEST: unknown member colour'],
    [
      'bad display type',
      dashboard({ tiles: [tile({ config: { displayType: 'pie3d' } })] }),
      /^BAD_REQUEST: tiles\[0\]\.config\.displayType: must be one of line, /,
    ],
    ['no body', undefined, 'BAD_REQUEST: a JSON body is required'],
  ])('create refuses %s', async (_n, body, text) => {
    expectError(await op(cloud, 'createDashboard', S, { body }), 400, text);
  });

  it('update validates the same way', async () => {
    expectError(
      await op(
        cloud,
        'updateDashboard',
        { ...S, dashboardId: DASHBOARD },
        { body: dashboard({ tiles: [tile({ h: 0 })] }) },
      ),
      400,
      'BAD_REQUEST: tiles[0].h: must be at least 1',
    );
  });
});

describe('alerts', () => {
  it('lists the fixtures alert', async () => {
    const list = expectOk('listAlerts', await op(cloud, 'listAlerts', S));
    expect(list).toEqual([
      expect.objectContaining({ id: ALERT, state: 'OK', dashboardId: DASHBOARD, tileId: 'error-count' }),
    ]);
  });

  it('create, get, update (full replace), delete', async () => {
    const created = expectOk(
      'createAlert',
      await op(cloud, 'createAlert', S, { body: alertBody(DASHBOARD, 'rows-per-second') }),
    );
    expect(created).toMatchObject({
      state: 'OK',
      source: 'tile',
      interval: '5m',
      threshold: 100,
      createdAt: '2026-11-22T09:00:00.000Z',
    });
    expect(created.id).toMatch(/^[0-9a-f]{24}$/);
    expect(expectOk('getAlert', await op(cloud, 'getAlert', { ...S, alertId: created.id }))).toEqual(created);
    clock += 1000;
    const upd = expectOk(
      'updateAlert',
      await op(
        cloud,
        'updateAlert',
        { ...S, alertId: created.id },
        {
          body: alertBody(DASHBOARD, 'error-count', {
            thresholdType: 'between',
            threshold: 1,
            thresholdMax: 5,
            channel: { type: 'email', emailRecipients: ['ops@example.com'] },
            name: undefined,
          }),
        },
      ),
    );
    expect(upd).toMatchObject({
      id: created.id,
      thresholdType: 'between',
      thresholdMax: 5,
      tileId: 'error-count',
      createdAt: created.createdAt,
      updatedAt: '2026-11-22T09:00:01.000Z',
    });
    expect(upd.name).toBeUndefined();
    expectOk('deleteAlert', await op(cloud, 'deleteAlert', { ...S, alertId: created.id }));
    expectError(await op(cloud, 'getAlert', { ...S, alertId: created.id }), 404, 'NOT_FOUND: Unknown alert');
  });

  it('a saved-search alert needs no dashboard', async () => {
    const body = {
      source: 'saved_search',
      savedSearchId: 's1',
      interval: '1h',
      threshold: 0,
      thresholdType: 'equal',
      channel: { type: 'webhook', webhookId: 'w' },
    };
    expectOk('createAlert', await op(cloud, 'createAlert', S, { body }));
  });

  it.each([
    [
      'unknown dashboard',
      alertBody('0d00000000000000000000ff', 'error-count'),
      'BAD_REQUEST: dashboardId: unknown dashboard 0d00000000000000000000ff',
    ],
    ['unknown tile', alertBody(DASHBOARD, 'nope'), `BAD_REQUEST: tileId: unknown tile nope on dashboard ${DASHBOARD}`],
    [
      'bad interval',
      alertBody(DASHBOARD, 'error-count', { interval: '2m' }),
      /^BAD_REQUEST: interval: must be one of 1m, 5m/,
    ],
    [
      'between without max',
      alertBody(DASHBOARD, 'error-count', { thresholdType: 'between' }),
      'BAD_REQUEST: thresholdMax is required for between',
    ],
    [
      'max below threshold',
      alertBody(DASHBOARD, 'error-count', { thresholdType: 'not_between', thresholdMax: 50 }),
      'BAD_REQUEST: thresholdMax must be >= threshold',
    ],
    [
      'tile source without tile',
      alertBody(DASHBOARD, 'x', { tileId: undefined }),
      'BAD_REQUEST: tileId is required for a tile alert',
    ],
    ['no channel', alertBody(DASHBOARD, 'error-count', { channel: undefined }), /^BAD_REQUEST: channel/],
    [
      'webhook without id',
      alertBody(DASHBOARD, 'error-count', { channel: { type: 'webhook' } }),
      'BAD_REQUEST: channel.webhookId: is required',
    ],
    [
      'message too long',
      alertBody(DASHBOARD, 'error-count', { message: 'm'.repeat(4097) }),
      'BAD_REQUEST: message: must be at most 4096 characters',
    ],
    ['malformed dashboard id', alertBody('nope', 'error-count'), /^BAD_REQUEST: dashboardId: /],
    [
      'unknown member',
      alertBody(DASHBOARD, 'error-count', { severity: 'high' }),
      'BAD_REQUEST: unknown member severity',
    ],
  ])('create refuses %s', async (_n, body, text) => {
    expectError(await op(cloud, 'createAlert', S, { body }), 400, text);
  });

  it('update checks the tile too', async () => {
    expectError(
      await op(cloud, 'updateAlert', { ...S, alertId: ALERT }, { body: alertBody(DASHBOARD, 'gone') }),
      400,
      /unknown tile gone/,
    );
  });

  it('deleting a dashboard deletes its alerts, and only those', async () => {
    const other = expectOk(
      'createDashboard',
      await op(cloud, 'createDashboard', S, { body: dashboard({ tiles: [tile({ id: 't1' })] }) }),
    );
    const kept = expectOk('createAlert', await op(cloud, 'createAlert', S, { body: alertBody(other.id, 't1') }));
    expectOk('createAlert', await op(cloud, 'createAlert', S, { body: alertBody(DASHBOARD, 'rows-per-second') }));
    expect(expectOk('listAlerts', await op(cloud, 'listAlerts', S))).toHaveLength(3);
    expectOk('deleteDashboard', await op(cloud, 'deleteDashboard', { ...S, dashboardId: DASHBOARD }));
    const left = expectOk('listAlerts', await op(cloud, 'listAlerts', S));
    expect(left.map((a: { id: string }) => a.id)).toEqual([kept.id]);
    expectError(await op(cloud, 'getAlert', { ...S, alertId: ALERT }), 404, 'NOT_FOUND: Unknown alert');
  });

  it('stacks are per service', async () => {
    expect(expectOk('listAlerts', await op(cloud, 'listAlerts', { serviceId: SVC.staging }))).toEqual([]);
    expectError(
      await op(cloud, 'getDashboard', { serviceId: SVC.staging, dashboardId: DASHBOARD }),
      404,
      'NOT_FOUND: Unknown dashboard',
    );
  });
});

describe('sources', () => {
  it('lists the sources of the service', async () => {
    const list = expectOk('listSources', await op(cloud, 'listSources', S));
    expect(list.map((s: { id: string; name: string; kind: string }) => [s.id, s.name, s.kind])).toEqual([
      ['0a0000000000000000000001', 'Logs', 'log'],
      ['0a0000000000000000000002', 'Traces', 'trace'],
    ]);
    expect(expectOk('listSources', await op(cloud, 'listSources', { serviceId: SVC.archive }))).toEqual([]);
  });
});
