// Observability stack: dashboards, alerts and sources (docs/platform-api.md#observability-stack).
// Inputs are strict (an unknown member is a 400 naming it); responses are loose (the platform
// may add members).
import { z } from 'zod';
import {
  AlertChannelType,
  AlertInterval,
  AlertSource,
  AlertState,
  AlertThresholdType,
  SourceKind,
  TileDisplayType,
} from './enums.js';
import { ObjectId } from './ids.js';

export const TileConfig = z.looseObject({
  displayType: TileDisplayType.optional(),
  sourceId: z.string().optional(),
  select: z.unknown().optional(),
});

export const TileInput = z.strictObject({
  id: z.string().min(1).max(36).optional(),
  name: z.string().min(1),
  x: z.number().int().min(0).max(23),
  y: z.number().int().min(0),
  w: z.number().int().min(1).max(24),
  h: z.number().int().min(1),
  config: TileConfig,
});
export type TileInput = z.infer<typeof TileInput>;

export const DashboardInput = z
  .strictObject({
    name: z.string().min(1).max(1024),
    tiles: z.array(TileInput).max(500),
    tags: z.array(z.string().max(32)).max(50).optional(),
  })
  .superRefine((d, ctx) => {
    const seen = new Set<string>();
    d.tiles.forEach((t, i) => {
      if (t.id === undefined) return;
      if (seen.has(t.id))
        ctx.addIssue({ code: 'custom', path: ['tiles', i, 'id'], message: `duplicate tile id ${t.id}` });
      seen.add(t.id);
    });
  });
export type DashboardInput = z.infer<typeof DashboardInput>;

// Responses require only what the platform's contract promises and accept what its published
// document allows: a dashboard there has no timestamps, an alert's channel may be an email one.
const timestamps = { createdAt: z.string().optional(), updatedAt: z.string().optional() };

export const Tile = z.looseObject({ ...TileInput.shape, id: z.string() });
export const Dashboard = z.looseObject({
  id: ObjectId,
  name: z.string(),
  tiles: z.array(Tile),
  tags: z.array(z.string()).default([]),
  ...timestamps,
});
export type Dashboard = z.infer<typeof Dashboard>;

export const AlertChannel = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal(AlertChannelType.enum.webhook), webhookId: z.string().min(1) }),
  z.strictObject({ type: z.literal(AlertChannelType.enum.email), emailRecipients: z.array(z.email()).min(1) }),
]);

const alertFields = {
  source: AlertSource.default('tile'),
  dashboardId: ObjectId.nullish(),
  tileId: z.string().min(1).max(36).nullish(),
  savedSearchId: z.string().min(1).nullish(),
  interval: AlertInterval,
  threshold: z.number(),
  thresholdMax: z.number().nullish(),
  thresholdType: AlertThresholdType,
  channel: AlertChannel,
  name: z.string().min(1).max(512).nullish(),
  message: z.string().min(1).max(4096).nullish(),
};

interface AlertShape {
  source: string;
  dashboardId?: string | null | undefined;
  tileId?: string | null | undefined;
  savedSearchId?: string | null | undefined;
  thresholdType: string;
  threshold: number;
  thresholdMax?: number | null | undefined;
}

// The platform's rules that tie members together. Whether the dashboard and tile
// exist is for the server to say (a 400 naming it).
function alertRules(a: AlertShape, ctx: z.RefinementCtx): void {
  if (a.source === 'tile') {
    if (!a.dashboardId)
      ctx.addIssue({ code: 'custom', path: ['dashboardId'], message: 'dashboardId is required for a tile alert' });
    if (!a.tileId) ctx.addIssue({ code: 'custom', path: ['tileId'], message: 'tileId is required for a tile alert' });
  } else if (!a.savedSearchId) {
    ctx.addIssue({
      code: 'custom',
      path: ['savedSearchId'],
      message: 'savedSearchId is required for a saved_search alert',
    });
  }
  if (a.thresholdType === 'between' || a.thresholdType === 'not_between') {
    if (a.thresholdMax === undefined || a.thresholdMax === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['thresholdMax'],
        message: `thresholdMax is required for ${a.thresholdType}`,
      });
    } else if (a.thresholdMax < a.threshold) {
      ctx.addIssue({ code: 'custom', path: ['thresholdMax'], message: 'thresholdMax must be >= threshold' });
    }
  }
}

export const AlertInput = z.strictObject(alertFields).superRefine(alertRules);
export type AlertInput = z.input<typeof AlertInput>;

/** A channel as answered: either kind, members the platform adds passed through. */
const AlertChannelAnswer = z.looseObject({
  type: AlertChannelType,
  webhookId: z.string().nullish(),
  emailRecipients: z.array(z.string()).nullish(),
});

export const Alert = z.looseObject({
  ...alertFields,
  channel: AlertChannelAnswer,
  source: AlertSource,
  id: ObjectId,
  state: AlertState,
  ...timestamps,
});
export type Alert = z.infer<typeof Alert>;

export const Source = z.looseObject({
  id: z.string(),
  name: z.string(),
  kind: SourceKind,
  connection: z.string(),
  from: z.looseObject({ databaseName: z.string(), tableName: z.string() }),
  timestampValueExpression: z.string().optional(),
});
export type Source = z.infer<typeof Source>;
