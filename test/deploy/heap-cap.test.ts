// One heap cap (NODE_OPTIONS=--max-old-space-size) for every way pipescaler ships with a memory
// limit: the Kubernetes Deployment, the image and the systemd unit give the same one, and the
// fleet bench's replicas run with it (bench/chaos/processes.ts reads the Deployment's), so its
// peak RSS figures in bench/results.json are of what ships; they, and the cap with what a replica
// holds besides V8's old space, stay under each memory limit. Without a cap V8 sizes its heap by
// the machine's memory, not the container's, and keeps garbage: the fleet bench's replicas went
// to 655 MB against the 512Mi limit.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { shippedNodeOptions } from '../../bench/chaos/processes.js';

/** What a replica holds besides V8's old space, MiB: the young generation (three semi-spaces of
 *  16 MiB at most) and about 90 MiB outside V8's heap that the fleet bench measured (its /metrics:
 *  process_resident_memory_bytes minus nodejs_heap_size_total_bytes). */
const OUTSIDE_OLD_SPACE = 48 + 90;

const read = (file: string) => readFileSync(file, 'utf8');

interface Container {
  name: string;
  env: { name: string; value?: string }[];
  resources: { requests: { memory: string }; limits: { memory: string } };
}
const deployment = parseAllDocuments(read('config/kubernetes/deployment.yaml'))
  .map((d) => d.toJS() as { kind: string; spec: { template: { spec: { containers: Container[] } } } })
  .find((o) => o.kind === 'Deployment')!;
const container = deployment.spec.template.spec.containers.find((c) => c.name === 'pipescaler')!;
const nodeOptions = container.env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
const cap = Number(/^--max-old-space-size=(\d+)$/.exec(nodeOptions)?.[1]);
const unit = read('config/systemd/pipescaler.service');

/** A Kubernetes quantity ("512Mi", "1Gi") or a systemd size ("512M": 1024-based), in MiB. */
function mib(q: string): number {
  const m = /^(\d+)(Mi|Gi|M|G)$/.exec(q);
  if (!m) throw new Error(`unexpected size ${q}`);
  return Number(m[1]) * (m[2]!.startsWith('G') ? 1024 : 1);
}
const limits = {
  kubernetes: mib(container.resources.limits.memory),
  'systemd MemoryMax': mib(/^MemoryMax=(\S+)$/m.exec(unit)![1]!),
  // MemoryHigh throttles the service and reclaims its memory above it
  'systemd MemoryHigh': mib(/^MemoryHigh=(\S+)$/m.exec(unit)![1]!),
};

describe('the heap cap', () => {
  it('is the same in the Deployment, the image, the systemd unit and the fleet bench', () => {
    expect(cap).toBeGreaterThan(0);
    const image = /^ENV [^]*?\bNODE_OPTIONS=(\S+)/m.exec(read('Dockerfile'))?.[1];
    expect(image).toBe(nodeOptions);
    expect([...unit.matchAll(/^Environment=NODE_OPTIONS=(.*)$/gm)].map((m) => m[1])).toEqual([nodeOptions]);
    expect(shippedNodeOptions(process.cwd())).toBe(nodeOptions);
  });

  it("leaves each memory limit room for what a replica holds besides V8's old space", () => {
    for (const [where, limit] of Object.entries(limits))
      expect(cap + OUTSIDE_OLD_SPACE, where).toBeLessThanOrEqual(limit);
  });

  it("keeps the fleet bench's replicas, run with it, under each memory limit", () => {
    const { figures } = JSON.parse(read('bench/results.json')) as {
      figures: { scenario: string; metric: string; value: number; note?: string }[];
    };
    const peaks = figures.filter((f) => f.scenario === 'fleet' && /^10x: replica .*: peak RSS$/.test(f.metric));
    expect(peaks.length).toBeGreaterThanOrEqual(3);
    for (const f of peaks) {
      expect(f.note, f.metric).toContain(`NODE_OPTIONS=${nodeOptions}`);
      for (const [where, limit] of Object.entries(limits)) expect(f.value, `${f.metric}, ${where}`).toBeLessThan(limit);
    }
  });
});
