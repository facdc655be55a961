// Client overhead: requests per second of ApiClient.scalePipe with an empty body against
// the embedded cloud (rate limit off, in its own process) vs a bare undici request loop on the
// same server, same pipe, same concurrency. Runs alternate bare/client so drift hits both alike.
import { fileURLToPath } from 'node:url';
import { Pool, request } from 'undici';
import { ApiClient } from '../src/api/index.js';
import { cloudProcess } from './child.js';
import { closedLoop, type LoadResult } from './load.js';
import { median, type Figure } from './stats.js';

const FIXTURES = fileURLToPath(new URL('../config/cloud.yaml', import.meta.url));
const KEY = { keyId: 'pipescaler-demo-key', keySecret: 'demo-secret-change-me' };
const REF = {
  organizationId: '5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b',
  serviceId: 'a1000000-0000-4000-8000-000000000001',
  pipeId: 'b1000000-0000-4000-8000-000000000001',
};
const PATH = `/v1/organizations/${REF.organizationId}/services/${REF.serviceId}/pipes/${REF.pipeId}/scaling`;

export interface Options {
  n: number;
  concurrency: number;
  runs: number;
}

export async function clientOverhead(o: Options): Promise<Figure[]> {
  const cloud = await cloudProcess(FIXTURES, false);
  const pool = new Pool(cloud.url, { keepAliveTimeout: 30_000 });
  const client = new ApiClient({ baseUrl: cloud.url, ...KEY, retry: false, timeoutMs: 10_000 });
  const headers = {
    authorization: `Basic ${Buffer.from(`${KEY.keyId}:${KEY.keySecret}`).toString('base64')}`,
    'content-type': 'application/json',
  };
  const bare = async () => {
    const res = await request(`${cloud.url}${PATH}`, { method: 'PATCH', headers, body: '{}', dispatcher: pool });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`bare: HTTP ${res.statusCode}`);
  };
  const typed = () => client.scalePipe(REF, {});
  const deadline = 120_000;
  try {
    // Warm both paths (connections, JIT, the server) before anything is timed: a first timed
    // pair without this ran the bare loop at half speed.
    for (let w = 0; w < 2; w++) {
      await closedLoop(Math.min(2000, o.n), o.concurrency, deadline, bare);
      await closedLoop(Math.min(2000, o.n), o.concurrency, deadline, typed);
    }
    const bares: LoadResult[] = [];
    const typeds: LoadResult[] = [];
    for (let r = 0; r < o.runs; r++) {
      bares.push(await closedLoop(o.n, o.concurrency, deadline, bare));
      typeds.push(await closedLoop(o.n, o.concurrency, deadline, typed));
    }
    const rps = (x: LoadResult) => (x.n * 1000) / x.ms;
    const cpuPerReq = (x: LoadResult) => x.cpuUs / x.n;
    const ratios = bares.map((b, i) => rps(typeds[i]!) / rps(b));
    const scenario = 'client overhead';
    const n = o.n;
    const note = `scalePipe {} x${o.n}, concurrency ${o.concurrency}, cloud in a child process`;
    const ratio = median(ratios);
    const cpuRatios = bares.map((b, i) => cpuPerReq(typeds[i]!) / cpuPerReq(b));
    return [
      {
        scenario,
        metric: 'bare undici request',
        value: median(bares.map(rps)),
        unit: 'req/s',
        n,
        runs: bares.map(rps),
        note,
      },
      {
        scenario,
        metric: 'ApiClient.scalePipe',
        value: median(typeds.map(rps)),
        unit: 'req/s',
        n,
        runs: typeds.map(rps),
      },
      {
        scenario,
        metric: 'client / bare (paired runs)',
        value: ratio,
        unit: 'ratio',
        n,
        runs: ratios,
        goal: '>= 0.8',
        pass: ratio >= 0.8,
      },
      {
        scenario,
        metric: 'bare: client-side CPU per request',
        value: median(bares.map(cpuPerReq)),
        unit: 'us',
        n,
        runs: bares.map(cpuPerReq),
      },
      {
        scenario,
        metric: 'ApiClient: client-side CPU per request',
        value: median(typeds.map(cpuPerReq)),
        unit: 'us',
        n,
        runs: typeds.map(cpuPerReq),
      },
      {
        scenario,
        metric: 'CPU per request: client / bare',
        value: median(cpuRatios),
        unit: 'ratio',
        n,
        runs: cpuRatios,
        note: 'steadier than req/s on a shared machine: what the client costs when the caller is CPU-bound',
      },
    ];
  } finally {
    await client.close();
    await pool.close();
    await cloud.close();
  }
}
