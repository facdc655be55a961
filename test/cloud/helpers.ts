// Shared by the cloud tests: the demo ids, a started cloud, and one HTTP call over undici.
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { expect } from 'vitest';
import { ENDPOINTS, type Operation } from '../../src/api/index.js';
import { buildPath } from '../../src/api/endpoints.js';
import type { SentResultOf } from '../../src/api/internal.js';
import { loadFixtures, startCloud, type CloudOptions, type EmbeddedCloud } from '../../src/cloud/index.js';

export const FIXTURES_PATH = fileURLToPath(new URL('../../config/cloud.yaml', import.meta.url));
export const DEMO = loadFixtures(FIXTURES_PATH);

export const ORG = '5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b';
export const OTHER_ORG = '0b7e6f5d-4c3b-4a29-8817-6e5d4c3b2a19';
export const SVC = {
  analytics: 'a1000000-0000-4000-8000-000000000001',
  staging: 'a1000000-0000-4000-8000-000000000002',
  archive: 'a1000000-0000-4000-8000-000000000003',
} as const;
export const PIPE = {
  orders: 'b1000000-0000-4000-8000-000000000001',
  clickstream: 'b1000000-0000-4000-8000-000000000002',
  payments: 'b1000000-0000-4000-8000-000000000003',
  audit: 'b1000000-0000-4000-8000-000000000004',
  nightly: 'b1000000-0000-4000-8000-000000000005',
  backfill: 'b1000000-0000-4000-8000-000000000006',
  usersCdc: 'b1000000-0000-4000-8000-000000000007',
  legacy: 'b1000000-0000-4000-8000-000000000008',
  archive: 'b1000000-0000-4000-8000-000000000009',
} as const;
export const RPE = {
  ready: 'e1000000-0000-4000-8000-000000000001',
  provisioning: 'e1000000-0000-4000-8000-000000000002',
} as const;
export const DASHBOARD = '0d0000000000000000000001';
export const ALERT = '0e0000000000000000000001';

export const basic = (keyId: string, secret: string): string =>
  `Basic ${Buffer.from(`${keyId}:${secret}`).toString('base64')}`;
export const DEMO_AUTH = basic('pipescaler-demo-key', 'demo-secret-change-me');
export const OTHER_AUTH = basic('other-org-key', 'other-secret');

/** A cloud on port 0 from the demo fixtures, rate limit off unless asked. */
export function demoCloud(options: Partial<CloudOptions> = {}): Promise<EmbeddedCloud> {
  return startCloud({ fixtures: DEMO, rateLimit: false, ...options });
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON (an envelope's members); undefined when it is not a JSON object. */
  json: JsonBody | undefined;
}

export type JsonBody = Readonly<Record<string, unknown>>;

export interface CallOptions {
  auth?: string | null;
  body?: unknown;
  /** Sent as is, with the content type given (default application/json when body is set). */
  rawBody?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

/** One HTTP call; path relative to the cloud's url. */
export async function call(cloud: EmbeddedCloud, method: string, path: string, o: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...o.headers };
  const auth = o.auth === undefined ? DEMO_AUTH : o.auth;
  if (auth !== null) headers.authorization = auth;
  let body: string | Buffer | undefined;
  if (o.rawBody !== undefined) body = o.rawBody;
  else if (o.body !== undefined) body = JSON.stringify(o.body);
  if (body !== undefined) headers['content-type'] = o.contentType ?? 'application/json';
  const res = await request(`${cloud.url}${path}`, { method: method as 'GET', headers, body });
  const text = await res.body.text();
  let json: JsonBody | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    json = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as JsonBody) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

/** Call an operation of the endpoint table by name. */
export function op(
  cloud: EmbeddedCloud,
  name: Operation,
  params: Record<string, string>,
  o: CallOptions = {},
): Promise<Answer> {
  const def = ENDPOINTS[name];
  return call(cloud, def.method, buildPath(def.path, { organizationId: ORG, ...params }), o);
}

/** A 200 whose body is valid against ENDPOINTS[name].response; returns the result as sent. */
export function expectOk<Op extends Operation>(name: Op, a: Answer): SentResultOf<Op> {
  expect(a.status, a.text).toBe(200);
  const parsed = ENDPOINTS[name].response.safeParse(a.json);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  expect(a.json?.status).toBe(200);
  expect(a.json?.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  // Valid against the response schema, whose input type this is.
  return a.json?.result as SentResultOf<Op>;
}

/** An error in the platform's envelope with exactly this text. */
export function expectError(a: Answer, status: number, error: string | RegExp): void {
  expect(a.status, a.text).toBe(status);
  expect(a.json).toMatchObject({ status });
  expect(typeof a.json?.requestId).toBe('string');
  if (typeof error === 'string') expect(a.json?.error).toBe(error);
  else expect(a.json?.error).toMatch(error);
}

export const scalingPath = (pipe: string, svc: string = SVC.analytics) => ({ serviceId: svc, pipeId: pipe });
