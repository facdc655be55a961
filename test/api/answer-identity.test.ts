// A read answered with another resource's id (a caching proxy, a routing fault) is refused as
// API_BAD_RESPONSE, never taken as the state of the pipe or endpoint that was asked about: the
// daemon and the CLI then treat it as the failed read it is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, ApiError } from '../../src/api/index.js';
import { demoCredentials, startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { DEMO, ORG, PIPE, RPE, SVC } from '../cloud/helpers.js';
import { rawServer, type RawServer } from './raw-server.js';

const SVC_REF = { organizationId: ORG, serviceId: SVC.analytics };
let cloud: EmbeddedCloud;
let server: RawServer;
let client: ApiClient;
const answers = { pipe: '', endpoint: '' };

beforeAll(async () => {
  cloud = await startCloud({ fixtures: DEMO, rateLimit: false });
  const creds = demoCredentials(DEMO);
  const real = new ApiClient({ baseUrl: cloud.url, ...creds });
  const envelope = (result: unknown, requestId: string) => JSON.stringify({ status: 200, requestId, result });
  const pipe = await real.scalePipe({ ...SVC_REF, pipeId: PIPE.orders }, {});
  const endpoint = await real.getReversePrivateEndpoint({ ...SVC_REF, reversePrivateEndpointId: RPE.ready });
  answers.pipe = envelope(pipe.result, pipe.requestId);
  answers.endpoint = envelope(endpoint.result, endpoint.requestId);
  await real.close();
  // every pipe is answered as orders, every endpoint as the ready one
  server = await rawServer([
    (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url?.includes('/reversePrivateEndpoints/') ? answers.endpoint : answers.pipe);
    },
  ]);
  client = new ApiClient({ baseUrl: server.url, ...creds, retry: false });
});

afterAll(async () => {
  await client.close();
  await server.close();
  await cloud.close();
});

describe('a read answer about another resource', () => {
  it('is the pipe asked about when the ids match, in any case', async () => {
    const res = await client.scalePipe({ ...SVC_REF, pipeId: PIPE.orders.toUpperCase() }, {});
    expect(res.result.id).toBe(PIPE.orders);
  });

  it('is refused for a pipe: API_BAD_RESPONSE naming both ids', async () => {
    const err = await client.scalePipe({ ...SVC_REF, pipeId: PIPE.clickstream }, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'API_BAD_RESPONSE', operation: 'scalePipe', status: 200 });
    expect((err as ApiError).message).toBe(
      `scalePipe: the answer is about pipe ${PIPE.orders}, not the pipe asked about (${PIPE.clickstream})`,
    );
  });

  it('is refused for a reverse private endpoint', async () => {
    const err = await client
      .getReversePrivateEndpoint({ ...SVC_REF, reversePrivateEndpointId: RPE.provisioning })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'API_BAD_RESPONSE', operation: 'getReversePrivateEndpoint' });
  });
});
