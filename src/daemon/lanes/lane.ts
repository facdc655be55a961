// A key's lane: the client, apply queue and request budget that serve one API key.
import type { Queue } from 'bullmq';
import type { ApiClient } from '../../api/index.js';
import type { KeyBudget } from './budget.js';

/** The client and apply queue that serve one API key. */
export interface KeyLane {
  readonly keyName: string;
  readonly keyId: string;
  readonly client: ApiClient;
  readonly queue: Queue;
  /** The key's request budget, shared by every replica: every request takes a unit (spend.ts). */
  readonly budget: KeyBudget;
}
