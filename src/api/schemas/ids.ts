import { z } from 'zod';

/** Path and resource ids of organizations, services, pipes and endpoints (loose RFC 4122 shape). */
export const Uuid = z.guid();
/** Dashboard and alert ids: 24-hex object ids (docs/platform-api.md#ids). */
export const ObjectId = z.string().regex(/^[0-9a-f]{24}$/i, 'must be a 24-hex object id');

export const isUuid = (s: string): boolean => Uuid.safeParse(s).success;
export const isObjectId = (s: string): boolean => ObjectId.safeParse(s).success;
