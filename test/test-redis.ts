// The Redis every test uses, named in one place: PIPESCALER_TEST_REDIS_URL, by default the local
// one at 127.0.0.1:6379 db 0. test/vitest.config.ts hands it to the daemons and CLIs the tests
// start as PIPESCALER_REDIS_URL. Each test file keeps to its own key prefix and removes it.
export const TEST_REDIS_URL = process.env.PIPESCALER_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
