import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCloud } from '../../src/cloud/index.js';
import {
  basic,
  call,
  demoCloud,
  expectError,
  expectOk,
  op,
  OTHER_AUTH,
  OTHER_ORG,
  PIPE,
  scalingPath,
  SVC,
} from './helpers.js';

let cloud: EmbeddedCloud;
beforeAll(async () => {
  cloud = await demoCloud();
});
afterAll(() => cloud.close());

describe('authentication (HTTP Basic against the fixtures keys)', () => {
  it.each([
    ['missing', null],
    ['Bearer scheme', 'Bearer pipescaler-demo-key:demo-secret-change-me'],
    ['bad base64', 'Basic !!!not-base64!!!'],
    ['no colon', `Basic ${Buffer.from('pipescaler-demo-key').toString('base64')}`],
    ['empty key id', basic('', 'demo-secret-change-me')],
    ['wrong secret', basic('pipescaler-demo-key', 'demo-secret-change-mf')],
    ['secret of another length', basic('pipescaler-demo-key', 'x')],
    ['unknown key', basic('nobody', 'demo-secret-change-me')],
  ])('%s credentials answer 401 in the envelope', async (name, auth) => {
    const a = await op(cloud, 'listServices', {}, { auth });
    expectError(a, 401, /^UNAUTHORIZED: /);
    if (name === 'bad base64') expect(a.json?.error).toBe('UNAUTHORIZED: Malformed Basic credentials: not base64');
    if (name === 'Bearer scheme') expect(a.json?.error).toBe('UNAUTHORIZED: Authorization must use the Basic scheme');
    // Nothing of the secret comes back.
    expect(a.text).not.toContain('demo-secret');
  });

  it('accepts the demo key', async () => {
    expectOk('listServices', await op(cloud, 'listServices', {}));
  });

  it('answers 403 for a key of another organization', async () => {
    const a = await op(cloud, 'scalePipe', scalingPath(PIPE.orders), { auth: OTHER_AUTH, body: {} });
    expectError(a, 403, /^FORBIDDEN: /);
  });

  it('lets the other key read its own organization', async () => {
    const a = await call(cloud, 'GET', `/v1/organizations/${OTHER_ORG}/services`, { auth: OTHER_AUTH });
    expect(expectOk('listServices', a)).toHaveLength(1);
  });

  it('checks auth before existence and org access before ids', async () => {
    const unknownPipe = 'b1000000-0000-4000-8000-0000000000ff';
    expectError(await op(cloud, 'scalePipe', scalingPath(unknownPipe), { auth: null, body: {} }), 401, /^UNAUTHORIZED/);
    expectError(
      await op(cloud, 'scalePipe', scalingPath('not-a-uuid'), { auth: OTHER_AUTH, body: {} }),
      403,
      /^FORBIDDEN/,
    );
    expectError(await op(cloud, 'scalePipe', scalingPath('not-a-uuid'), { body: { replicas: 99 } }), 400, /pipeId/);
    expectError(
      await op(cloud, 'scalePipe', scalingPath(unknownPipe), { body: { replicas: 99 } }),
      404,
      'NOT_FOUND: Unknown pipe',
    );
    expectError(
      await op(cloud, 'scalePipe', scalingPath(PIPE.archive, SVC.archive), { body: { replicas: 99 } }),
      400,
      'BAD_REQUEST: replicas must be between 1 and 10',
    );
  });
});
