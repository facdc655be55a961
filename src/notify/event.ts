// A notification event: an outcome with the id it keeps through every retry and every replica (a
// receiver deduplicates on it), its severity and its time as ISO 8601. Made once, when the outcome
// enters the outbox, and stored there as JSON.
import { randomUUID } from 'node:crypto';
import type { ScalingValues } from '../api/index.js';
import { cleanText, severityOf, type Outcome, type Severity } from '../history/index.js';
import type { NotifySink } from '../config/index.js';

export interface NotifyEvent {
  readonly id: string;
  readonly type: string;
  readonly severity: Severity;
  readonly time: string;
  readonly pipe: string;
  readonly reason: string;
  readonly before?: ScalingValues;
  readonly after?: ScalingValues;
  readonly target?: ScalingValues;
  readonly windows?: readonly string[];
  readonly key?: string;
  readonly requestId?: string;
  readonly message?: string;
}

export function toEvent(o: Outcome, id: string = randomUUID()): NotifyEvent {
  return {
    id,
    type: o.outcome,
    severity: severityOf(o),
    time: new Date(o.at).toISOString(),
    pipe: o.pipe,
    reason: cleanText(o.reason, 64),
    ...(o.before ? { before: o.before } : {}),
    ...(o.after ? { after: o.after } : {}),
    ...(o.target ? { target: o.target } : {}),
    ...(o.windows && o.windows.length > 0 ? { windows: o.windows } : {}),
    ...(o.key !== undefined ? { key: o.key } : {}),
    ...(o.requestId !== undefined ? { requestId: o.requestId } : {}),
    ...(o.message !== undefined ? { message: cleanText(o.message, 200) } : {}),
  };
}

const RANK: Readonly<Record<Severity, number>> = { info: 0, warning: 1, error: 2 };

/** A glob of a pipe name: "*" matches any run of characters. */
function globMatch(glob: string, name: string): boolean {
  if (!glob.includes('*')) return glob === name;
  const re = new RegExp(
    `^${glob
      .split('*')
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return re.test(name);
}

/** Whether the sink wants this outcome: its events, pipes and least severity. */
export function sinkWants(sink: NotifySink, o: Outcome): boolean {
  if (o.outcome === 'test') return true;
  if (sink.events !== null && !sink.events.includes(o.outcome)) return false;
  if (sink.pipes !== null && !sink.pipes.some((g) => globMatch(g, o.pipe))) return false;
  return RANK[severityOf(o)] >= RANK[sink.severity];
}
