// The public face of the client: what `import ... from 'pipescaler'` gives (package.json
// "exports"). A deliberate list: path building, retry arithmetic, status-to-code mapping and the
// error-path formatter stay internal; the rest of the project reaches what it shares through internal.ts.

// The client and its options, results and events.
export {
  ApiClient,
  DEFAULT_TIMEOUT_MS,
  type ClientOptions,
  type ApiResponse,
  type CallOptions,
  type CallParams,
  type ResultOf,
  type ServiceRef,
  type PipeRef,
  type ReversePrivateEndpointRef,
  type DashboardRef,
  type AlertRef,
  type Deleted,
} from './client.js';
export { ApiClientEmitter, type ApiClientEvents, type ApiClientEventName } from './client-events.js';
export { DEFAULT_RETRY, type RetryOptions, type RetryPolicy } from './retry-policy.js';
export type { RateLimitHeaders } from './response.js';
export { PLATFORM_RATE_LIMIT, type RateLimit } from './rate-limit.js';

// Errors: one type, branch on `code`.
export {
  ApiError,
  API_ERROR_CODES,
  isApiError,
  type ApiErrorCode,
  type ApiErrorDetails,
  type ApiReach,
} from './errors.js';

// The endpoint table (operation names double as metric labels).
export { ENDPOINTS, OPERATIONS, type Operation, type HttpMethod, type EndpointDef } from './endpoints.js';

// Quantity strings of the live API ("500m", "2Gi") as numbers.
export { cpuMillicores, memoryGb } from './quantity.js';

// Schemas (zod) and their types.
export {
  SCALING_LIMITS,
  SCALING_FIELDS,
  PIPE_KINDS,
  SCALABLE_KINDS,
  KIND_FIELDS,
  isScalingField,
  clampToLimit,
  limitViolation,
  type FieldLimit,
  type ScalingField,
  type ScalingValues,
  type PipeKind,
  type ScalableKind,
} from './schemas/limits.js';
export {
  PipeState,
  SCALABLE_PIPE_STATES,
  ServiceState,
  SERVICE_STATES_REFUSING_CHANGES,
  ReversePrivateEndpointStatus,
  ObjectStorageCompression,
  ObjectStorageType,
  KafkaType,
  KafkaOffsetStrategy,
  ReversePrivateEndpointType,
  MskAuthentication,
  EndpointProtocol,
  AlertInterval,
  AlertThresholdType,
  AlertSource,
  AlertChannelType,
  AlertState,
  TileDisplayType,
  SourceKind,
} from './schemas/enums.js';
export { Uuid, ObjectId, isUuid, isObjectId } from './schemas/ids.js';
export {
  Pipe,
  PipeScaling,
  PipeSource,
  PipeDestination,
  PipeSettings,
  FieldMapping,
  KafkaSource,
  ObjectStorageSource,
  KinesisSource,
  PostgresSource,
  ScalingRequest,
  pipeKind,
} from './schemas/pipe.js';
export {
  Service,
  Tag,
  TagKey,
  TagValue,
  parseTagFilter,
  matchesTagFilters,
  type TagFilter,
} from './schemas/service.js';
export { ReversePrivateEndpoint } from './schemas/endpoint.js';
export {
  Dashboard,
  DashboardInput,
  Tile,
  TileInput,
  TileConfig,
  Alert,
  AlertInput,
  AlertChannel,
  Source,
} from './schemas/stack.js';
export { envelope, EmptyEnvelope, ErrorBody, RateLimitBody } from './schemas/envelope.js';
