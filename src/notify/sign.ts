// The generic webhook's signature: X-Pipescaler-Signature: sha256=<hex HMAC-SHA256 of
// "<timestamp>.<body>"> with X-Pipescaler-Timestamp (unix seconds), so a receiver can check that
// the message is ours and refuse a replay older than it tolerates. verifySignature is what a
// receiver runs (the tests use it).
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-pipescaler-signature';
export const TIMESTAMP_HEADER = 'x-pipescaler-timestamp';
export const EVENT_ID_HEADER = 'x-pipescaler-event-id';

export function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export function verifySignature(secret: string, timestamp: string, body: string, header: string): boolean {
  const want = Buffer.from(signature(secret, timestamp, body));
  const got = Buffer.from(header);
  return want.length === got.length && timingSafeEqual(want, got);
}
