// Pipe and the scaling request, ranges from limits.ts (docs/platform-api.md#pipes, #scale-a-pipe).
import { z } from 'zod';
import { cpuMillicores, memoryGb } from '../quantity.js';
import { KafkaOffsetStrategy, KafkaType, ObjectStorageCompression, ObjectStorageType, PipeState } from './enums.js';
import { SCALING_FIELDS, SCALING_LIMITS, type PipeKind, type ScalingField } from './limits.js';
import { Uuid } from './ids.js';

const str = z.string();

export const KafkaSource = z.looseObject({
  type: KafkaType.optional(),
  brokers: str.optional(),
  topics: str.optional(),
  consumerGroup: str.optional(),
  iamRole: str.optional(),
  offset: z.looseObject({ strategy: KafkaOffsetStrategy.optional(), timestamp: str.nullish() }).optional(),
  schemaRegistry: z.looseObject({ url: str.optional(), caCertificate: str.nullish() }).nullish(),
  caCertificate: str.nullish(),
  reversePrivateEndpointIds: z.array(str).nullish(),
});

export const ObjectStorageSource = z.looseObject({
  type: ObjectStorageType.optional(),
  url: str.optional(),
  delimiter: str.nullish(),
  compression: ObjectStorageCompression.nullish(),
  isContinuous: z.boolean().optional(),
  queueUrl: str.nullish(),
  iamRole: str.nullish(),
  connectionString: str.nullish(),
  path: str.nullish(),
  azureContainerName: str.nullish(),
});

export const KinesisSource = z.looseObject({
  streamName: str.optional(),
  region: str.optional(),
  useEnhancedFanOut: z.boolean().optional(),
  timestamp: z.number().int().nullish(),
  iamRole: str.nullish(),
});

export const PostgresSource = z.looseObject({
  host: str.optional(),
  port: z.number().int().optional(),
  database: str.optional(),
  settings: z
    .looseObject({
      syncIntervalSeconds: z.number().int().optional(),
      pullBatchSize: z.number().int().optional(),
      publicationName: str.optional(),
      replicationSlotName: str.optional(),
      allowNullableColumns: z.boolean().optional(),
      initialLoadParallelism: z.number().int().optional(),
      snapshotNumRowsPerPartition: z.number().int().optional(),
      snapshotNumberOfParallelTables: z.number().int().optional(),
      enableFailoverSlots: z.boolean().optional(),
    })
    .optional(),
  tableMappings: z
    .array(
      z.looseObject({
        sourceSchemaName: str,
        sourceTable: str,
        targetTable: str,
        excludedColumns: z.array(str).optional(),
        useCustomSortingKey: z.boolean().optional(),
        sortingKeys: z.array(str).optional(),
      }),
    )
    .optional(),
});

export const PipeSource = z.looseObject({
  kafka: KafkaSource.nullish(),
  objectStorage: ObjectStorageSource.nullish(),
  kinesis: KinesisSource.nullish(),
  postgres: PostgresSource.nullish(),
});
export type PipeSource = z.infer<typeof PipeSource>;

export const PipeDestination = z.looseObject({
  database: str,
  table: str,
  managedTable: z.boolean().optional(),
  tableDefinition: z
    .looseObject({
      engine: z
        .looseObject({ type: str.optional(), versionColumnId: str.nullish(), columnIds: z.array(str).nullish() })
        .optional(),
      sortingKey: z.array(str).optional(),
      partitionBy: str.nullish(),
      primaryKey: str.nullish(),
    })
    .nullish(),
  columns: z.array(z.looseObject({ name: str, type: str })).optional(),
});

export const FieldMapping = z.looseObject({ sourceField: str, destinationField: str });

export const PipeSettings = z.looseObject({
  streaming_max_insert_wait_ms: z.number().int().optional(),
  object_storage_concurrency: z.number().int().optional(),
  object_storage_polling_interval_ms: z.number().int().optional(),
  object_storage_max_insert_bytes: z.number().int().optional(),
  object_storage_max_file_count: z.number().int().optional(),
  engine_max_threads: z.number().int().optional(),
  engine_max_insert_threads: z.number().int().optional(),
  engine_min_insert_block_size_bytes: z.number().int().optional(),
  engine_max_download_threads: z.number().int().optional(),
  engine_parallel_distributed_insert_select: z.number().int().optional(),
  object_storage_use_cluster_function: z.boolean().optional(),
  engine_parallel_view_processing: z.boolean().optional(),
});

// A value the platform reports for a scaling field. Quantity strings become numbers; a value
// outside the field's range (the transient 0 or null right after a change) reads as null,
// "not known yet", and never as the real value. concurrency 0 is real: "sized automatically".
// A value that is no number or quantity at all ("two", "2 gallons") is a bad response, not
// "not known yet": reading it as null would hide a broken answer behind a transient state.
function reported(field: ScalingField, parse: (v: unknown) => number | null, what: string) {
  const { min, max } = SCALING_LIMITS[field];
  return z
    .union([z.number(), z.string(), z.null()])
    .optional()
    .transform((v, ctx) => {
      if (v === null || v === undefined) return null;
      const n = parse(v);
      if (n === null) {
        ctx.addIssue({ code: 'custom', message: `must be ${what}, got ${JSON.stringify(v).slice(0, 40)}` });
        return z.NEVER;
      }
      return n >= min && n <= max ? n : null;
    });
}
// A count sent as a decimal string ("3"), as the live API sends its other numbers, is that count.
const asNumber = (v: unknown): number | null =>
  typeof v === 'number' ? v : typeof v === 'string' && /^\s*[0-9]+(\.[0-9]+)?\s*$/.test(v) ? Number(v) : null;

export const PipeScaling = z.looseObject({
  replicas: reported('replicas', asNumber, 'a number'),
  concurrency: reported('concurrency', asNumber, 'a number'),
  replicaCpuMillicores: reported('replicaCpuMillicores', cpuMillicores, 'a number or a CPU quantity'),
  replicaMemoryGb: reported('replicaMemoryGb', memoryGb, 'a number or a memory quantity'),
});
export type PipeScaling = z.output<typeof PipeScaling>;

const KNOWN_STATES: ReadonlySet<string> = new Set(PipeState.options);

/**
 * A pipe's state as the platform reports it. One the client does not know (the platform added a
 * state) reads as Unknown, a state that takes no scaling, instead of failing the whole answer:
 * refusing it would count a change the platform made as failed and send it again. The client
 * names the state it did not know (ApiResponse.tolerated).
 */
export const ReportedPipeState = z
  .string()
  .transform((s): PipeState => (KNOWN_STATES.has(s) ? (s as PipeState) : 'Unknown'));

export const Pipe = z.looseObject({
  id: Uuid,
  serviceId: Uuid,
  name: str,
  state: ReportedPipeState,
  scaling: PipeScaling,
  source: PipeSource,
  destination: PipeDestination,
  fieldMappings: z.array(FieldMapping),
  settings: PipeSettings.nullish(),
  createdAt: str,
  updatedAt: str,
});
export type Pipe = z.output<typeof Pipe>;

/** The kind of a pipe: the one non-null member of its source. */
export function pipeKind(source: PipeSource): PipeKind | null {
  if (source.kafka || source.kinesis) return 'stream';
  if (source.objectStorage) return 'objectStorage';
  if (source.postgres) return 'database';
  return null;
}

function scalingMember(field: ScalingField) {
  const { min, max, integer } = SCALING_LIMITS[field];
  const range = `${field} must be between ${min} and ${max}`;
  const base = z.number({ error: `${field} must be a number` });
  const n = (integer ? base.int({ error: `${field} must be an integer` }) : base)
    .min(min, { error: range })
    .max(max, { error: range });
  return n.nullable().optional();
}

/** Body of PATCH .../pipes/{pipeId}/scaling. Every member optional and nullable. */
export const ScalingRequest = z.strictObject(
  Object.fromEntries(SCALING_FIELDS.map((f) => [f, scalingMember(f)])) as Record<
    ScalingField,
    ReturnType<typeof scalingMember>
  >,
);
export type ScalingRequest = z.infer<typeof ScalingRequest>;
