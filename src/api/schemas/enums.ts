// Every enum of the platform's API (docs/platform-api.md), written once.
import { z } from 'zod';

export const PipeState = z.enum([
  'Unknown',
  'Provisioning',
  'Running',
  'Degraded',
  'Stopping',
  'Stopped',
  'Failed',
  'Completed',
  'InternalError',
  'Setup',
  'Snapshot',
  'Paused',
  'Pausing',
  'Modifying',
  'Resync',
]);
export type PipeState = z.infer<typeof PipeState>;

/** States in which a pipe takes a scaling change; any other state is skipped with its name. */
export const SCALABLE_PIPE_STATES: ReadonlySet<PipeState> = new Set<PipeState>(['Running', 'Degraded', 'Provisioning']);

export const ObjectStorageCompression = z.enum(['none', 'gzip', 'gz', 'brotli', 'br', 'xz', 'LZMA', 'zstd', 'auto']);
export const ObjectStorageType = z.enum([
  's3',
  'gcs',
  'dospaces',
  'azureblobstorage',
  'cloudflarer2',
  'ovhobjectstorage',
]);
export const KafkaType = z.enum([
  'kafka',
  'redpanda',
  'msk',
  'gcmk',
  'confluent',
  'warpstream',
  'azureeventhub',
  'dokafka',
]);
export const KafkaOffsetStrategy = z.enum(['from_beginning', 'from_latest', 'from_timestamp']);

export const ReversePrivateEndpointType = z.enum([
  'VPC_ENDPOINT_SERVICE',
  'VPC_RESOURCE',
  'MSK_MULTI_VPC',
  'GCP_PSC_SERVICE_ATTACHMENT',
]);
export const MskAuthentication = z.enum(['SASL_IAM', 'SASL_SCRAM']);
export const ReversePrivateEndpointStatus = z.enum([
  'Unknown',
  'Provisioning',
  'Deleting',
  'Ready',
  'Failed',
  'PendingAcceptance',
  'Rejected',
  'Expired',
]);
export type ReversePrivateEndpointStatus = z.infer<typeof ReversePrivateEndpointStatus>;

export const EndpointProtocol = z.enum(['https', 'nativesecure', 'mysql']);

export const ServiceState = z.enum([
  'starting',
  'stopping',
  'terminating',
  'softdeleting',
  'awaking',
  'partially_running',
  'provisioning',
  'running',
  'stopped',
  'terminated',
  'softdeleted',
  'degraded',
  'failed',
  'idle',
]);
export type ServiceState = z.infer<typeof ServiceState>;

/** Service states in which the platform refuses a scaling change with 424 (docs/platform-api.md#services). */
export const SERVICE_STATES_REFUSING_CHANGES: ReadonlySet<ServiceState> = new Set(['idle', 'stopped']);

export const AlertInterval = z.enum(['1m', '5m', '15m', '30m', '1h', '6h', '12h', '1d']);
export const AlertThresholdType = z.enum([
  'above',
  'below',
  'above_exclusive',
  'below_or_equal',
  'equal',
  'not_equal',
  'between',
  'not_between',
]);
export const AlertSource = z.enum(['tile', 'saved_search']);
export const AlertChannelType = z.enum(['webhook', 'email']);
export const AlertState = z.enum(['ALERT', 'OK', 'INSUFFICIENT_DATA', 'DISABLED', 'PENDING']);

export const TileDisplayType = z.enum([
  'line',
  'stacked_bar',
  'table',
  'number',
  'pie',
  'categorical_bar',
  'heatmap',
  'search',
  'event_patterns',
  'markdown',
]);

export const SourceKind = z.enum(['log', 'trace', 'metric', 'session', 'promql']);
