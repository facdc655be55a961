import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Files share one Redis and each uses its own key prefix. Most of a file's time is spent
    // waiting on real servers (Prometheus scrapes, Redis topologies, rate-limit windows), so two
    // run side by side even on two cores (vitest's default there is one): 677 s -> 397 s.
    pool: 'forks',
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default'],
  },
});
