// The embedded cloud's records, as its store keeps them: the JSON the API answers, with the ids
// and maps a lookup needs. Types only; store.ts holds them, propagation.ts changes their scaling.
import type { z } from 'zod';
import type {
  FieldMapping,
  PipeDestination,
  PipeSettings,
  PipeSource,
  PipeState,
  ReversePrivateEndpoint,
  ScalingField,
  Service,
  Source,
} from '../api/index.js';
import type { FixtureAlert, FixtureDashboard } from './fixtures-schema.js';

export type StoredScaling = Record<ScalingField, number | null>;
export interface StoredPipe {
  id: string;
  serviceId: string;
  name: string;
  state: PipeState;
  scaling: StoredScaling;
  source: PipeSource;
  destination: z.output<typeof PipeDestination>;
  fieldMappings: z.output<typeof FieldMapping>[];
  settings?: z.output<typeof PipeSettings> | null | undefined;
  createdAt: string;
  updatedAt: string;
  /** Members the fixtures add beyond the contract's fields are answered as given. */
  [extra: string]: unknown;
}
export type WithTileIds<D extends { tiles: readonly { id?: string | undefined }[] }> = Omit<D, 'tiles'> & {
  tiles: (D['tiles'][number] & { id: string })[];
};
export type StoredDashboard = WithTileIds<z.output<typeof FixtureDashboard> & { tags: string[] }>;
export type StoredAlert = z.output<typeof FixtureAlert>;

export interface StoredService {
  readonly organizationId: string;
  /** The service as the services list answers it (with state and tags). */
  readonly service: Service & { state: NonNullable<Service['state']>; tags: NonNullable<Service['tags']> };
  readonly pipes: Map<string, StoredPipe>;
  readonly reversePrivateEndpoints: Map<string, ReversePrivateEndpoint>;
  readonly dashboards: Map<string, StoredDashboard>;
  readonly alerts: Map<string, StoredAlert>;
  readonly sources: Map<string, Source>;
}

export interface StoredOrganization {
  readonly id: string;
  readonly name: string | undefined;
  readonly services: Map<string, StoredService>;
}

export interface StoredKey {
  readonly keyId: string;
  readonly organizationId: string;
}
