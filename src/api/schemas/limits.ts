// The platform's scaling ranges (docs/platform-api.md#scale-a-pipe): the one table every range in
// the project comes from (the client's request schema, the embedded cloud's validation, the config
// loader, decide()).

export interface FieldLimit {
  readonly min: number;
  readonly max: number;
  readonly integer: boolean;
}

export const SCALING_LIMITS = {
  replicas: { min: 1, max: 10, integer: true },
  concurrency: { min: 0, max: 34, integer: true },
  replicaCpuMillicores: { min: 125, max: 2000, integer: true },
  replicaMemoryGb: { min: 0.5, max: 8, integer: false },
} as const satisfies Record<string, FieldLimit>;

export type ScalingField = keyof typeof SCALING_LIMITS;

export const SCALING_FIELDS = Object.keys(SCALING_LIMITS) as readonly ScalingField[];

/** A full or partial set of scaling values, by field. */
export type ScalingValues = Partial<Record<ScalingField, number>>;

/** The kinds of pipe, from the one non-null member of `source` (docs/platform-api.md#pipe-kinds). */
export const PIPE_KINDS = ['stream', 'objectStorage', 'database'] as const;
export type PipeKind = (typeof PIPE_KINDS)[number];
/** The kinds that take scaling (a database pipe takes none). */
export const SCALABLE_KINDS = ['stream', 'objectStorage'] as const satisfies readonly PipeKind[];
export type ScalableKind = (typeof SCALABLE_KINDS)[number];

/** Which scaling fields a pipe of each kind takes (docs/platform-api.md#pipe-kinds). */
export const KIND_FIELDS: Readonly<Record<PipeKind, readonly ScalingField[]>> = {
  stream: ['replicas', 'replicaCpuMillicores', 'replicaMemoryGb'],
  objectStorage: ['concurrency'],
  database: [],
};

export function isScalingField(name: string): name is ScalingField {
  return Object.hasOwn(SCALING_LIMITS, name);
}

/** Clamp a value into the platform range of a field (integers rounded to the nearest). */
export function clampToLimit(field: ScalingField, value: number): number {
  const limit: FieldLimit = SCALING_LIMITS[field];
  const v = limit.integer ? Math.round(value) : value;
  return Math.min(limit.max, Math.max(limit.min, v));
}

/** Null when the value fits the field's platform range, else the platform's message. */
export function limitViolation(field: ScalingField, value: unknown): string | null {
  const limit: FieldLimit = SCALING_LIMITS[field];
  if (typeof value !== 'number' || !Number.isFinite(value)) return `${field} must be a number`;
  if (limit.integer && !Number.isInteger(value)) return `${field} must be an integer`;
  if (value < limit.min || value > limit.max) {
    return `${field} must be between ${limit.min} and ${limit.max}`;
  }
  return null;
}
