// Every Redis key the daemon owns outside BullMQ's, in one place. BullMQ keys live under
// `<prefix>:<queue>:...`; ours under `<prefix>:ps:...` so no queue name can collide with them.

export function redisKeys(prefix: string) {
  const base = `${prefix}:ps`;
  return {
    /** Hash: the state of one pipe (see state-store.ts). */
    pipe: (name: string) => `${base}:pipe:${name}`,
    /** String (JSON {reason, until?}), expiring at `until`: the pause flag of one pipe. */
    pause: (name: string) => `${base}:pause:${name}`,
    /** Hash: service id (lower case) -> JSON {state, at}, the services of one organization as last read. */
    services: (organizationId: string) => `${base}:services:${organizationId.toLowerCase()}`,
    /** The same for every pipe at once (`pause --all`). */
    pauseAll: `${base}:pause-all`,
    /** Every key of ours, for cleanup and status. */
    pattern: `${base}:*`,
  } as const;
}

/** BullMQ rejects ':' in names and ids; API key ids and pipe names are mapped onto a safe alphabet. */
export function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, '_');
}
