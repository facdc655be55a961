// A 0/1 gauge of pipes (a window driving it, parked, backing off) kept per group (the pipe's policy
// or key, from PipeLabels): 1 while any pipe of the group has it on, 0 once none has. Under per-pipe
// detail each pipe has its own series, with its group's label too. The state is kept per pipe
// either way, so a reload that moves pipes between groups or turns detail on or off rebuilds the
// series from it (refresh) instead of leaving a group at 1 for a pipe it no longer has.
import type { Gauge } from 'prom-client';

type Labels = Record<string, string>;

interface Entry {
  readonly pipe: string;
  readonly extra: Labels;
  on: boolean;
  /** The series it counts in now. */
  series?: string;
}

interface Series {
  readonly labels: Labels;
  /** Entries it stands for, and those of them that are on. */
  readonly members: Set<string>;
  readonly on: Set<string>;
}

export class GroupedFlag {
  private readonly entries = new Map<string, Entry>();
  private readonly series = new Map<string, Series>();
  private readonly byPipe = new Map<string, Set<string>>();

  constructor(
    private readonly gauge: Gauge,
    private readonly labelsOf: (pipe: string) => Labels,
  ) {}

  set(pipe: string, on: boolean, extra: Labels = {}): void {
    const id = `${pipe}\u0000${JSON.stringify(extra)}`;
    let entry = this.entries.get(id);
    if (entry === undefined) {
      this.entries.set(id, (entry = { pipe, extra, on }));
      const ids = this.byPipe.get(pipe) ?? new Set<string>();
      this.byPipe.set(pipe, ids.add(id));
    }
    entry.on = on;
    this.place(id, entry);
  }

  /** Whether the pipe has this entry on. */
  isOn(pipe: string, extra: Labels = {}): boolean {
    return this.entries.get(`${pipe}\u0000${JSON.stringify(extra)}`)?.on === true;
  }

  /** Drop a pipe's entries (a pipe no longer configured), or those `which` picks. */
  forget(pipe: string, which: (extra: Labels) => boolean = () => true): void {
    const ids = this.byPipe.get(pipe);
    for (const id of ids ?? []) {
      const e = this.entries.get(id);
      if (e === undefined || !which(e.extra)) continue;
      this.entries.delete(id);
      ids?.delete(id);
      this.leave(id, e);
    }
    if (ids?.size === 0) this.byPipe.delete(pipe);
  }

  /** Every entry set to `on` (a reload unparks every pipe). */
  setAll(on: boolean): void {
    for (const [id, e] of this.entries) {
      e.on = on;
      this.place(id, e);
    }
  }

  /** Rebuild every series from the entries (groups or detail may have changed). */
  refresh(): void {
    this.gauge.reset();
    this.series.clear();
    for (const [id, e] of this.entries) {
      delete e.series;
      this.place(id, e);
    }
  }

  private leave(id: string, e: Entry): void {
    const s = e.series === undefined ? undefined : this.series.get(e.series);
    if (s === undefined || e.series === undefined) return;
    s.members.delete(id);
    s.on.delete(id);
    if (s.members.size === 0) {
      this.gauge.remove(s.labels);
      this.series.delete(e.series);
    } else this.gauge.set(s.labels, s.on.size > 0 ? 1 : 0);
    delete e.series;
  }

  private place(id: string, e: Entry): void {
    const labels = { ...this.labelsOf(e.pipe), ...e.extra };
    const key = JSON.stringify(Object.entries(labels).sort());
    if (e.series !== key) this.leave(id, e);
    let s = this.series.get(key);
    if (s === undefined) this.series.set(key, (s = { labels, members: new Set(), on: new Set() }));
    s.members.add(id);
    if (e.on) s.on.add(id);
    else s.on.delete(id);
    e.series = key;
    this.gauge.set(labels, s.on.size > 0 ? 1 : 0);
  }
}
