// Database service, its tags and the tag filter of the services list (docs/platform-api.md#services,
// #list-services).
import { z } from 'zod';
import { EndpointProtocol, ServiceState } from './enums.js';
import { Uuid } from './ids.js';

const TAG_CHARS = /^[a-zA-Z0-9._-]+$/;
export const TagKey = z.string().min(1).max(128).regex(TAG_CHARS, 'may hold only letters, digits, ".", "_" and "-"');
export const TagValue = z
  .string()
  .max(256)
  .regex(/^[a-zA-Z0-9._-]*$/, 'may hold only letters, digits, ".", "_" and "-"');
export const Tag = z.strictObject({ key: TagKey, value: TagValue.optional() });
export type Tag = z.infer<typeof Tag>;

export const Service = z.looseObject({
  id: Uuid,
  name: z.string(),
  state: ServiceState.optional(),
  engineVersion: z.string().optional(),
  endpoints: z
    .array(
      z.looseObject({
        protocol: EndpointProtocol,
        host: z.string(),
        port: z.number().int(),
        username: z.string().optional(),
      }),
    )
    .optional(),
  minTotalMemoryGb: z.number().optional(),
  maxTotalMemoryGb: z.number().optional(),
  minReplicaMemoryGb: z.number().optional(),
  maxReplicaMemoryGb: z.number().optional(),
  numReplicas: z.number().int().optional(),
  idleScaling: z.boolean().optional(),
  idleTimeoutMinutes: z.number().int().optional(),
  ipAccessList: z.array(z.looseObject({ source: z.string(), description: z.string().optional() })).optional(),
  createdAt: z.iso.datetime({ offset: true }).optional(),
  encryptionKey: z.string().nullish(),
  encryptionAssumedRoleIdentifier: z.string().nullish(),
  iamRole: z.string().nullish(),
  privateEndpointIds: z.array(z.string()).optional(),
  availablePrivateEndpointIds: z.array(z.string()).optional(),
  dataWarehouseId: z.string().nullish(),
  isPrimary: z.boolean().optional(),
  isReadonly: z.boolean().optional(),
  byocId: z.string().nullish(),
  hasTransparentDataEncryption: z.boolean().optional(),
  transparentDataEncryptionKeyId: z.string().nullish(),
  encryptionRoleId: z.string().nullish(),
  tags: z.array(Tag).optional(),
});
export type Service = z.infer<typeof Service>;

/** One `filter` entry of GET .../services: `tag:Key` or `tag:Key=Value`. */
export interface TagFilter {
  key: string;
  value?: string;
}

/** Parse a filter entry; a string says what is wrong with it. */
export function parseTagFilter(entry: string): TagFilter | string {
  if (!entry.startsWith('tag:')) return `filter "${entry}" is not supported: only tag:Key or tag:Key=Value`;
  const body = entry.slice(4);
  const eq = body.indexOf('=');
  const key = eq === -1 ? body : body.slice(0, eq);
  const value = eq === -1 ? undefined : body.slice(eq + 1);
  if (!TagKey.safeParse(key).success) return `filter "${entry}" has an invalid tag key`;
  if (value !== undefined && (value === '' || !TagValue.safeParse(value).success)) {
    return `filter "${entry}" has an invalid tag value`;
  }
  return value === undefined ? { key } : { key, value };
}

/** True when the tags match every filter (all filters must match). */
export function matchesTagFilters(tags: readonly Tag[], filters: readonly TagFilter[]): boolean {
  return filters.every((f) => tags.some((t) => t.key === f.key && (f.value === undefined || t.value === f.value)));
}
