// The live API may answer replicaCpuMillicores and replicaMemoryGb as Kubernetes quantity strings
// ("500m", "1", "2Gi", "512Mi") instead of numbers (docs/platform-api.md#reported-scaling). These turn
// them into the contract's units: millicores for CPU, GB for memory.

const QUANTITY = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$/;

const MEMORY_UNITS_IN_GB: Readonly<Record<string, number>> = {
  '': 1, // a bare number in the GB field is already GB
  Ki: 1 / 1024 ** 2,
  Mi: 1 / 1024,
  Gi: 1,
  Ti: 1024,
  k: 1e-6,
  K: 1e-6,
  M: 1e-3,
  G: 1,
  T: 1e3,
};

/** "500m" -> 500, "1" -> 1000, "1.5" -> 1500, 250 -> 250; null when not a CPU quantity. */
export function cpuMillicores(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const m = QUANTITY.exec(value);
  if (!m) return null;
  const n = Number(m[1]);
  if (m[2] === 'm') return n;
  if (m[2] === '') return Math.round(n * 1000);
  return null;
}

/** "2Gi" -> 2, "512Mi" -> 0.5, "4" -> 4, 0.5 -> 0.5; null when not a memory quantity. */
export function memoryGb(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const m = QUANTITY.exec(value);
  if (!m) return null;
  const factor = MEMORY_UNITS_IN_GB[m[2] ?? ''];
  if (factor === undefined) return null;
  return Math.round(Number(m[1]) * factor * 1e6) / 1e6;
}
