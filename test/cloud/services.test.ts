import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCloud } from '../../src/cloud/index.js';
import { call, demoCloud, expectError, expectOk, op, ORG, RPE, SVC } from './helpers.js';

let cloud: EmbeddedCloud;
beforeAll(async () => {
  cloud = await demoCloud();
});
afterAll(() => cloud.close());

const list = async (query: string): Promise<string[]> => {
  const a = await call(cloud, 'GET', `/v1/organizations/${ORG}/services${query}`);
  return (expectOk('listServices', a) as { name: string }[]).map((s) => s.name);
};

describe('GET .../services with repeated tag filters', () => {
  it('lists every service of the organization without a filter, with state and tags', async () => {
    const a = await op(cloud, 'listServices', {});
    const services = expectOk('listServices', a);
    expect(services.map((s: { name: string }) => s.name)).toEqual(['analytics-prod', 'ingest-staging', 'archive']);
    expect(services[2]).toMatchObject({
      id: SVC.archive,
      state: 'idle',
      tags: [
        { key: 'Environment', value: 'Production' },
        { key: 'tier', value: 'cold' },
      ],
    });
  });

  it('tag:Key=Value matches that pair', async () => {
    expect(await list('?filter=tag:Environment=Production')).toEqual(['analytics-prod', 'archive']);
  });

  it('tag:Key matches any service having the key', async () => {
    expect(await list('?filter=tag:isActive')).toEqual(['analytics-prod', 'ingest-staging']);
  });

  it('several filters must all match', async () => {
    expect(await list('?filter=tag:Environment=Production&filter=tag:isActive')).toEqual(['analytics-prod']);
    expect(await list('?filter=tag:team=data&filter=tag:isActive&filter=tag:Environment=Staging')).toEqual([
      'ingest-staging',
    ]);
  });

  it('no match is an empty list', async () => {
    expect(await list('?filter=tag:Environment=Dev')).toEqual([]);
    expect(await list('?filter=tag:nope')).toEqual([]);
  });

  it.each(['name:analytics', 'tag:', 'tag:bad key', 'tag:Environment=', 'Environment=Production'])(
    '"%s" is a 400',
    async (f) => {
      const a = await call(
        cloud,
        'GET',
        `/v1/organizations/${ORG}/services?filter=tag:isActive&filter=${encodeURIComponent(f)}`,
      );
      expectError(a, 400, /^BAD_REQUEST: filter ".*"/);
    },
  );
});

describe('GET .../pipesReversePrivateEndpoints/{id}', () => {
  it('answers the endpoint with its status and service', async () => {
    const r = expectOk(
      'getReversePrivateEndpoint',
      await op(cloud, 'getReversePrivateEndpoint', { serviceId: SVC.analytics, reversePrivateEndpointId: RPE.ready }),
    );
    expect(r).toMatchObject({
      id: RPE.ready,
      serviceId: SVC.analytics,
      type: 'MSK_MULTI_VPC',
      mskAuthentication: 'SASL_IAM',
      status: 'Ready',
    });
    const p = expectOk(
      'getReversePrivateEndpoint',
      await op(cloud, 'getReversePrivateEndpoint', {
        serviceId: SVC.staging,
        reversePrivateEndpointId: RPE.provisioning,
      }),
    );
    expect(p).toMatchObject({
      status: 'Provisioning',
      type: 'VPC_ENDPOINT_SERVICE',
      dnsNames: [],
      privateDnsNames: [],
    });
  });
});
