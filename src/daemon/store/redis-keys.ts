// Every Redis key the daemon owns outside BullMQ's, in one place. BullMQ keys live under
// `<prefix>:<queue>:...`; ours under `<prefix>:ps:...` so no queue name can collide with them.
// Every key starts with the prefix, so on a Redis Cluster a hash-tagged prefix ("{pipescaler}",
// required there, src/config/redis.ts) puts all of them in one slot: the scripts and multi-key
// commands of budget-scripts.ts, state-store.ts, redis-guard.ts, the tick's SET NX and metric-source.ts
// never cross slots.

export function redisKeys(prefix: string) {
  const base = `${prefix}:ps`;
  return {
    /** Hash: the state of one pipe (see state-store.ts). */
    pipe: (name: string) => `${base}:pipe:${name}`,
    /** String (JSON {reason, until?, pipe}), expiring at `until`: the pause flag of one pipe, by
     *  its identity (refOf: "<org>/<service>/<pipe>"), so a rename keeps it (operator-state.ts). */
    pause: (ref: string) => `${base}:pause-of:${ref}`,
    /** String (JSON, a policy Override plus the pipe's name then): the override of one pipe, by identity. */
    override: (ref: string) => `${base}:override:${ref}`,
    /** Set: the identities that have a pause or an override, to list orphans without a SCAN. */
    operatorIndex: `${base}:operator`,
    /** Where versions before identity-keyed pauses kept a pipe's pause: by name (migrated at start). */
    legacyPause: (name: string) => `${base}:pause:${name}`,
    /** Hash: service id (lower case) -> JSON {state, at}, the services of one organization as last read. */
    services: (organizationId: string) => `${base}:services:${organizationId.toLowerCase()}`,
    /** Hash {end, left}: one API key's request budget, the platform's window as its answers report it (budget.ts). */
    budget: (keyId: string) => `${base}:budget:${safeName(keyId)}`,
    /** String, expiring a few minutes later: the replica that enqueued the tick at this epoch second. */
    tick: (epochS: number) => `${base}:tick:${epochS}`,
    /** String (JSON {since, lostAt?}): written at start, checked at every tick (redis-guard.ts). */
    marker: `${base}:marker`,
    /** String (JSON, heartbeat.ts), expiring 30 s after its last write: one daemon replica alive. */
    replica: (id: string) => `${base}:replica:${id}`,
    /** Set: the ids of the replicas that wrote a heartbeat (status forgets those whose key expired). */
    replicas: `${base}:replicas`,
    /** The same for every pipe at once (`pause --all`). */
    pauseAll: `${base}:pause-all`,
    /** String (JSON), for a few minutes: a metric policy's query result at one tick, shared by every
     *  replica. `variant` names the query (metricVariant()), so a reload that changes it between the
     *  tick and its evaluations never reads the old query's result as the new one's. */
    metricTick: (policy: string, tickAt: number, variant: string) => `${base}:metric:${policy}:${tickAt}:${variant}`,
    /** String, NX with a short expiry: the replica that queries Prometheus for that tick. */
    metricLock: (policy: string, tickAt: number, variant: string) =>
      `${base}:metric-lock:${policy}:${tickAt}:${variant}`,
    /** String: epoch ms of a policy's last good query result. */
    metricGood: (policy: string) => `${base}:metric-good:${policy}`,
    /** String (JSON {status, code, at}): an API key whose check the platform refused (key-auth.ts). */
    keyRefusal: (keyName: string) => `${base}:key-refusal:${safeName(keyName)}`,
    /** String (JSON), for a refresh period: a forecast policy's predictions per series, made by one
     *  replica from one range query (forecast-source.ts) and read by all. */
    forecast: (policy: string, slot: number, variant: string) => `${base}:forecast:${policy}:${slot}:${variant}`,
    /** String, NX with a short expiry: the replica that makes that forecast. */
    forecastLock: (policy: string, slot: number, variant: string) =>
      `${base}:forecast-lock:${policy}:${slot}:${variant}`,
    /** List, newest first: one pipe's last measured actuation latencies in ms, by its identity
     *  (actuation-store.ts), expiring 30 days after its last write. */
    actuation: (ref: string) => `${base}:actuation:${ref}`,
    /** List, newest first: the last actuation latencies of every pipe of one kind. */
    actuationKind: (kind: string) => `${base}:actuation-kind:${kind}`,
    /** String, for an hour: a change whose settle read found it in force (reported `landed_late`)
     *  while its sender still held it (turn-answer.ts): its own 200, should it still come, adds its audit
     *  line, not a second outcome. */
    landed: (intentId: string) => `${base}:landed:${intentId}`,
    /** Every key of ours, for cleanup and status. */
    pattern: `${base}:*`,
  } as const;
}

/** BullMQ rejects ':' in names and ids; API key ids and pipe names are mapped onto a safe alphabet. */
export function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, '_');
}
