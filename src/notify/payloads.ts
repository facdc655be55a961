// What each kind of sink receives for one event or for a coalesced batch: the generic webhook's
// JSON, a CloudEvents 1.0 structured-mode event, a Slack incoming-webhook message. A batch of one
// is that event; a larger one is a summary whose id is derived from the sink and the batch, so
// every retry and every replica sends it under the same id.
import { createHash } from 'node:crypto';
import type { ScalingValues } from '../api/index.js';
import type { NotifySink } from '../config/index.js';
import type { NotifyEvent } from './event.js';

export interface Message {
  readonly id: string;
  readonly body: string;
  readonly contentType: string;
}

/** Summaries list at most this many events per message; a larger batch goes out in parts. */
export const EVENTS_PER_MESSAGE = 1_000;
/** Pipes a Slack summary names before "and N more". */
const SLACK_NAMES = 10;

export interface Batch {
  /** Stable for the batch: the sink and the batch's start. */
  readonly key: string;
  readonly events: readonly NotifyEvent[];
}

/** A uuid-shaped id from a stable text (receivers often store ids in uuid columns). */
export function stableId(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

interface Summary {
  readonly id: string;
  readonly type: 'summary';
  readonly time: string;
  readonly count: number;
  readonly outcomes: Record<string, number>;
  readonly part?: { readonly index: number; readonly of: number };
  readonly events: readonly NotifyEvent[];
}

function summaryOf(batch: Batch, events: readonly NotifyEvent[], index: number, of: number): Summary {
  const outcomes: Record<string, number> = {};
  for (const e of events) outcomes[e.type] = (outcomes[e.type] ?? 0) + 1;
  return {
    id: stableId(`${batch.key}/${index}`),
    type: 'summary',
    time: events[events.length - 1]?.time ?? new Date(0).toISOString(),
    count: events.length,
    outcomes,
    ...(of > 1 ? { part: { index: index + 1, of } } : {}),
    events,
  };
}

/** The messages of a batch for this sink, in order (a retry resends those not yet accepted). */
export function messagesFor(sink: NotifySink, batch: Batch): Message[] {
  const { events } = batch;
  if (events.length === 0) return [];
  if (sink.type === 'slack') return [slackMessage(batch)];
  const units: (NotifyEvent | Summary)[] = [];
  if (events.length === 1 && events[0]) units.push(events[0]);
  else {
    const of = Math.ceil(events.length / EVENTS_PER_MESSAGE);
    for (let i = 0; i < of; i++)
      units.push(summaryOf(batch, events.slice(i * EVENTS_PER_MESSAGE, (i + 1) * EVENTS_PER_MESSAGE), i, of));
  }
  return units.map((u) =>
    sink.type === 'cloudevents'
      ? { id: u.id, body: JSON.stringify(cloudEvent(u)), contentType: 'application/cloudevents+json' }
      : { id: u.id, body: JSON.stringify(u), contentType: 'application/json' },
  );
}

export const CLOUDEVENTS_SOURCE = '/pipescaler';

function cloudEvent(u: NotifyEvent | Summary) {
  const { id, type, time, ...data } = u;
  return {
    specversion: '1.0',
    id,
    source: CLOUDEVENTS_SOURCE,
    type: type === 'summary' ? 'io.pipescaler.summary' : `io.pipescaler.outcome.${type}`,
    ...('pipe' in u ? { subject: u.pipe } : {}),
    time,
    datacontenttype: 'application/json',
    data,
  };
}

const ICON: Readonly<Record<string, string>> = { info: ':large_blue_circle:', warning: ':warning:', error: ':x:' };

function values(v: ScalingValues | undefined): string {
  if (!v) return '-';
  const parts = Object.entries(v).map(([f, x]) => `${f} ${String(x)}`);
  return parts.length > 0 ? parts.join(', ') : '-';
}

/** Slack's mrkdwn treats <, > and & as markup. */
const escapeSlack = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function eventLine(e: NotifyEvent): string {
  const moved = e.before || e.after ? `: ${values(e.before)} → ${values(e.after)}` : '';
  const windows = e.windows && e.windows.length > 0 ? ` [${e.windows.join(', ')}]` : '';
  const message = e.message !== undefined ? ` (${e.message})` : '';
  return `${e.pipe} ${e.type} (${e.reason})${moved}${windows}${message}`;
}

function slackMessage(batch: Batch): Message {
  const { events } = batch;
  const first = events[0];
  let text: string;
  if (events.length === 1 && first) {
    text = `${ICON[first.severity] ?? ''} pipescaler: ${escapeSlack(eventLine(first))}`;
  } else {
    const counts = new Map<string, number>();
    for (const e of events) counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
    const worst = events.some((e) => e.severity === 'error')
      ? 'error'
      : events.some((e) => e.severity === 'warning')
        ? 'warning'
        : 'info';
    const pipes = [...new Set(events.map((e) => e.pipe))];
    const named = pipes.slice(0, SLACK_NAMES).join(', ');
    const more = pipes.length > SLACK_NAMES ? ` and ${pipes.length - SLACK_NAMES} more` : '';
    text =
      `${ICON[worst] ?? ''} pipescaler: ${events.length} outcomes ` +
      `(${[...counts].map(([t, n]) => `${t} ${n}`).join(', ')}) for ${escapeSlack(named)}${more}`;
  }
  return { id: stableId(`${batch.key}/slack`), body: JSON.stringify({ text }), contentType: 'application/json' };
}
