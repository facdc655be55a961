// A lead slot's change that lost its place in the key's queue: another turn of the pipe held it
// (the pipe's one pending turn: a read queued for later, one waiting for the read share, one
// running), or a turn that could not wait promoted it. The wake asks for the change again at the
// slot's start, which raises whatever turn the pipe has pending then to a change's priority (or
// queues one), so the change goes from the slot's start, not when that other turn runs. In this
// process only: a replica gone before the slot leaves the change to the pipe's next evaluation.

/** One timer per pipe, for its earliest instant; `fire` asks for the change. */
export class LeadWakes {
  private readonly pending = new Map<string, { readonly at: number; readonly timer: NodeJS.Timeout }>();

  constructor(private readonly fire: (pipe: string, tickAt: number) => Promise<void>) {}

  /** Asks for the pipe's change at `at` (epoch ms, the wall clock); `tickAt` is the tick it came from. */
  at(pipe: string, at: number, tickAt: number): void {
    const pending = this.pending.get(pipe);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(
      () => {
        this.pending.delete(pipe);
        void this.fire(pipe, tickAt).catch(() => {
          // the queue closed (a stop, a reload that removed the key): the next evaluation decides
        });
      },
      Math.max(0, at - Date.now()),
    );
    timer.unref();
    this.pending.set(pipe, { at, timer });
  }

  /** The wakes pending: how many pipes' changes wait on this process's timers. */
  get size(): number {
    return this.pending.size;
  }

  clear(): void {
    for (const { timer } of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }
}
