// The ids of the demo organization in config/cloud.yaml, and a scripted
// random source for the embedded cloud's fault injection.
import { fileURLToPath } from 'node:url';
import type { DashboardInput } from '../../src/api/index.js';

export const CLOUD_FIXTURES = fileURLToPath(new URL('../../config/cloud.yaml', import.meta.url));

export const DEMO_KEY = { keyId: 'pipescaler-demo-key', keySecret: 'demo-secret-change-me' };
export const OTHER_KEY = { keyId: 'other-org-key', keySecret: 'other-secret' };
export const ORG = '5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b';
export const OTHER_ORG = '0b7e6f5d-4c3b-4a29-8817-6e5d4c3b2a19';
export const SERVICES = {
  analyticsProd: 'a1000000-0000-4000-8000-000000000001',
  ingestStaging: 'a1000000-0000-4000-8000-000000000002',
  archive: 'a1000000-0000-4000-8000-000000000003',
} as const;
export const PIPES = {
  ordersEvents: 'b1000000-0000-4000-8000-000000000001',
  clickstream: 'b1000000-0000-4000-8000-000000000002',
  nightlyS3: 'b1000000-0000-4000-8000-000000000005',
  backfillGcs: 'b1000000-0000-4000-8000-000000000006',
  usersCdc: 'b1000000-0000-4000-8000-000000000007',
  archiveEvents: 'b1000000-0000-4000-8000-000000000009',
} as const;
export const ENDPOINT_READY = 'e1000000-0000-4000-8000-000000000001';
export const SOURCES = ['0a0000000000000000000001', '0a0000000000000000000002'] as const;
export const UNKNOWN_UUID = 'f0000000-0000-4000-8000-00000000dead';
export const UNKNOWN_OBJECT_ID = 'ffffffffffffffffffffffff';
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** Draws the queued values first, then `fallback` (0.99: no fault fires below probability 0.99). */
export function scriptedRandom(fallback = 0.99): { random: () => number; queue: number[] } {
  const queue: number[] = [];
  return { queue, random: () => queue.shift() ?? fallback };
}

export const demoDashboard = (name = 'Pipes overview'): DashboardInput => ({
  name,
  tags: ['pipes'],
  tiles: [
    { id: 'lag', name: 'Consumer lag', x: 0, y: 0, w: 12, h: 4, config: { displayType: 'line', sourceId: SOURCES[0] } },
    {
      id: 'rows',
      name: 'Rows ingested',
      x: 12,
      y: 0,
      w: 12,
      h: 4,
      config: { displayType: 'number', sourceId: SOURCES[0] },
    },
  ],
});

export const demoAlert = (dashboardId: string, threshold = 1000) => ({
  source: 'tile' as const,
  dashboardId,
  tileId: 'lag',
  interval: '5m' as const,
  threshold,
  thresholdType: 'above' as const,
  channel: { type: 'webhook' as const, webhookId: 'hook-1' },
  name: 'Lag too high',
  message: 'orders-events is falling behind',
});
