// The in-memory state of the embedded cloud: Maps by id, so a lookup costs the same with ten
// pipes or ten thousand. Records are the JSON the API answers; tests may read and alter them.
import type { ScalingField } from '../api/index.js';
import type { ParsedFixtures } from './fixtures-schema.js';
import { applyDue, type PendingChange } from './propagation.js';
import type { StoredOrganization, StoredPipe, StoredScaling, StoredService, WithTileIds } from './records.js';

const EMPTY_SCALING: StoredScaling = {
  replicas: null,
  concurrency: null,
  replicaCpuMillicores: null,
  replicaMemoryGb: null,
};

export class CloudStore {
  readonly organizations = new Map<string, StoredOrganization>();
  readonly services = new Map<string, StoredService>();
  /** Every pipe by id, across services. */
  readonly pipes = new Map<string, StoredPipe>();
  /** When each pipe's scaling last changed (epoch ms), for the transient-zero quirk. */
  readonly scalingChangedAt = new Map<string, number>();
  /** Per pipe (lower-case id), the changes taken but not yet in effect, soonest first (propagation.ts). */
  readonly pending = new Map<string, PendingChange[]>();

  /** `now`: the cloud's clock, by which pending changes take effect. */
  constructor(readonly now: () => number = Date.now) {}

  static fromFixtures(f: ParsedFixtures, now: () => number = Date.now): CloudStore {
    const store = new CloudStore(now);
    for (const org of f.organizations) {
      const services = new Map<string, StoredService>();
      store.organizations.set(org.id.toLowerCase(), { id: org.id, name: org.name, services });
      for (const svc of org.services) {
        const { pipes, reversePrivateEndpoints, stack, ...service } = svc;
        const rec: StoredService = {
          organizationId: org.id,
          service,
          pipes: new Map(),
          reversePrivateEndpoints: new Map(
            reversePrivateEndpoints.map((e) => [e.id.toLowerCase(), { ...e, serviceId: svc.id }]),
          ),
          dashboards: new Map(
            stack.dashboards.map((d) => [d.id.toLowerCase(), withTileIds({ ...d, tags: d.tags ?? [] })]),
          ),
          alerts: new Map(stack.alerts.map((a) => [a.id.toLowerCase(), a])),
          sources: new Map(stack.sources.map((s) => [s.id.toLowerCase(), s])),
        };
        for (const { propagation: _ownDelay, ...p } of pipes) {
          const pipe: StoredPipe = {
            ...p,
            serviceId: svc.id,
            scaling: { ...EMPTY_SCALING, ...stripNulls(p.scaling) },
            destination: p.destination ?? { database: 'default', table: p.name.replace(/[^a-zA-Z0-9_]/g, '_') },
          };
          rec.pipes.set(p.id.toLowerCase(), pipe);
          store.pipes.set(p.id.toLowerCase(), pipe);
        }
        services.set(svc.id.toLowerCase(), rec);
        store.services.set(svc.id.toLowerCase(), rec);
      }
    }
    return store;
  }

  /**
   * A pipe by id as the platform holds it now (its changes whose delay has passed applied), for
   * tests that read or alter it (e.g. `store.pipe(id)!.state = 'Completed'`).
   */
  pipe(id: string): StoredPipe | undefined {
    const pipe = this.pipes.get(id.toLowerCase());
    if (pipe) applyDue(this, pipe, this.now());
    return pipe;
  }

  /** The pipe's changes not yet in effect, soonest first (empty when none). */
  pendingChanges(id: string): readonly PendingChange[] {
    const pipe = this.pipe(id);
    return pipe ? (this.pending.get(pipe.id.toLowerCase()) ?? []) : [];
  }

  service(id: string): StoredService | undefined {
    return this.services.get(id.toLowerCase());
  }
}

function stripNulls(s: Partial<Record<ScalingField, number | null | undefined>>): Partial<StoredScaling> {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => typeof v === 'number'));
}

/** Tiles without an id get one, as the platform assigns them. */
export function withTileIds<D extends { tiles: readonly { id?: string | undefined }[] }>(d: D): WithTileIds<D> {
  return { ...d, tiles: d.tiles.map((t) => ({ ...t, id: t.id ?? newObjectId() })) };
}

let counter = Math.floor(Math.random() * 0xffffff);
/** A 24-hex object id: 4 bytes of seconds, 5 random, 3 of a counter (the familiar shape). */
export function newObjectId(nowMs = Date.now()): string {
  counter = (counter + 1) & 0xffffff;
  const rand = Math.floor(Math.random() * 0xffffffffff);
  return (
    Math.floor(nowMs / 1000)
      .toString(16)
      .padStart(8, '0')
      .slice(-8) +
    rand.toString(16).padStart(10, '0') +
    counter.toString(16).padStart(6, '0')
  );
}
