// One delivery attempt: POST the message, within the sink's timeout. Any answer but 2xx, a timeout
// or a refused connection is a failure the outbox retries. An error names the status or the
// network code only: a Slack sink's URL is its credential and is never part of a message.
import { request } from 'undici';
import type { NotifySink } from '../config/index.js';
import type { Message } from './payloads.js';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signature } from './sign.js';

export class DeliveryError extends Error {
  override readonly name = 'DeliveryError';
}

export interface SendResult {
  readonly status: number;
  readonly ms: number;
}

export async function send(sink: NotifySink, message: Message, now: () => number = Date.now): Promise<SendResult> {
  const timestamp = String(Math.floor(now() / 1000));
  const headers: Record<string, string> = {
    'content-type': message.contentType,
    'user-agent': 'pipescaler',
    [EVENT_ID_HEADER]: message.id,
  };
  if (sink.secret !== undefined && sink.type !== 'slack') {
    headers[TIMESTAMP_HEADER] = timestamp;
    headers[SIGNATURE_HEADER] = signature(sink.secret, timestamp, message.body);
  }
  const started = performance.now();
  let status: number;
  try {
    const res = await request(sink.url, {
      method: 'POST',
      headers,
      body: message.body,
      signal: AbortSignal.timeout(sink.timeoutMs),
    });
    status = res.statusCode;
    await res.body.dump();
  } catch (err) {
    const e = err as { name?: string; code?: string };
    if (e.name === 'TimeoutError' || e.name === 'AbortError')
      throw new DeliveryError(`no answer within ${sink.timeoutMs} ms`);
    throw new DeliveryError(`connection failed (${e.code ?? e.name ?? 'error'})`);
  }
  if (status < 200 || status >= 300) throw new DeliveryError(`answered HTTP ${status}`);
  return { status, ms: performance.now() - started };
}
