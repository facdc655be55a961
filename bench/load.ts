// A closed-loop load generator: `concurrency` workers share `n` calls. Bounded in count and time.

export interface LoadResult {
  readonly n: number;
  readonly ms: number;
  /** CPU time of this process (user + system) spent during the run, in microseconds. */
  readonly cpuUs: number;
  readonly failures: number;
}

export async function closedLoop(
  n: number,
  concurrency: number,
  deadlineMs: number,
  call: () => Promise<unknown>,
): Promise<LoadResult> {
  let started = 0;
  let failures = 0;
  let firstError: unknown;
  const stopAt = performance.now() + deadlineMs;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const worker = async () => {
    while (started < n) {
      if (performance.now() > stopAt)
        throw new Error(`load did not finish ${n} calls within ${deadlineMs} ms (${started} started)`);
      started += 1;
      try {
        await call();
      } catch (err) {
        failures += 1;
        firstError ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (failures > 0)
    throw new Error(
      `${failures} of ${n} calls failed; first: ${firstError instanceof Error ? firstError.message : String(firstError)}`,
    );
  return { n, ms, cpuUs: cpu.user + cpu.system, failures };
}
