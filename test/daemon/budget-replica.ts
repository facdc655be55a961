// Another replica of a key, in a process of its own (forked by reload-stall.test.ts): it reads one
// pipe over and over through the key's shared budget, as a lane does (take, mark, write only while
// the mark holds, observe the answer), three at a time, until told to stop; then it says how many
// it sent and exits. Its event loop runs while the test's process is held.
import { Redis } from 'ioredis';
import { ApiClient, isApiError } from '../../src/api/index.js';
import { KeyBudget } from '../../src/daemon/lanes/budget.js';
import { UnitExpired, writeCheck } from '../../src/daemon/lanes/spend.js';

export interface ReplicaArgs {
  readonly redisUrl: string;
  readonly budgetKey: string;
  readonly limit: { readonly requests: number; readonly perMs: number };
  readonly baseUrl: string;
  readonly keyId: string;
  readonly keySecret: string;
  readonly pipe: { readonly organizationId: string; readonly serviceId: string; readonly pipeId: string };
}

const args = JSON.parse(process.argv[2]!) as ReplicaArgs;
const redis = new Redis(args.redisUrl, { maxRetriesPerRequest: null });
const budget = new KeyBudget(redis, args.budgetKey, args.limit);
const client = new ApiClient({ baseUrl: args.baseUrl, keyId: args.keyId, keySecret: args.keySecret, retry: false });
let stopping = false;
let sent = 0;

async function reader(): Promise<void> {
  while (!stopping) {
    const taken = await budget.take();
    const unit = taken.waitMs === 0 ? await budget.send(taken.at) : { ...taken, writeBy: -Infinity };
    if (unit.waitMs !== 0) {
      await new Promise((r) => setTimeout(r, Math.max(1, unit.waitMs)));
      continue;
    }
    try {
      const res = await client.scalePipe(args.pipe, {}, { retry: false, beforeSend: writeCheck(budget, unit) });
      sent += 1;
      await budget.observe(unit.at, res.rateLimit);
    } catch (err) {
      if (err instanceof UnitExpired) continue;
      if (!isApiError(err)) throw err;
      sent += 1;
      await budget.observe(unit.at, err.rateLimit, err.code === 'API_RATE_LIMITED');
    }
  }
}

const readers = Promise.all([reader(), reader(), reader()]);
process.send!('reading');
process.on('message', () => {
  stopping = true;
  void readers.then(async () => {
    await client.close();
    redis.disconnect();
    process.send!(sent, () => process.exit(0));
  });
});
process.on('disconnect', () => process.exit(0));
