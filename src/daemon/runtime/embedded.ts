// `api.baseUrl: embedded`: the daemon starts the embedded cloud in-process from `api.fixtures`
// and, when the config names no key, uses the fixtures' demo key. The cloud (fastify, ajv) is
// imported here, on first use, so a daemon against the platform never loads it. Its admin routes
// take a token made at each start, that the heartbeat names: `plan` and `simulate` read what this
// cloud holds through them (GET /admin/state), not a fresh copy of the fixtures.
import { randomBytes } from 'node:crypto';
import { PLATFORM_RATE_LIMIT } from '../../api/index.js';
import type { ApiKeyConfig, Config } from '../../config/index.js';

export interface EmbeddedCloud {
  readonly url: string;
  readonly demoKey: ApiKeyConfig;
  /** Bearer token of its /admin routes. */
  readonly adminToken: string;
  close(): Promise<void>;
}

export async function startEmbedded(config: Config): Promise<EmbeddedCloud> {
  const { demoCredentials, loadFixtures, startCloud } = await import('../../cloud/index.js');
  const fixtures = loadFixtures(config.api.fixtures);
  const adminToken = randomBytes(16).toString('hex');
  const cloud = await startCloud({ fixtures, port: 0, adminToken });
  const demo = demoCredentials(fixtures);
  return {
    url: cloud.url,
    demoKey: { keyId: demo.keyId, keySecret: demo.keySecret, rateLimit: PLATFORM_RATE_LIMIT },
    adminToken,
    close: () => cloud.close(),
  };
}

/** The keys to use: the config's, with the demo key standing in for any key left without an id. */
export function effectiveKeys(config: Config, demoKey: ApiKeyConfig | null): Config['api']['keys'] {
  if (!demoKey) return config.api.keys;
  const out: Record<string, ApiKeyConfig> = {};
  for (const [name, key] of Object.entries(config.api.keys)) {
    out[name] = key.keyId ? key : { ...demoKey, rateLimit: key.rateLimit };
  }
  return { default: demoKey, ...out };
}
