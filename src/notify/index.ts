// Notifications: outcomes sent to webhooks, Slack and CloudEvents receivers through a Redis outbox
// shared by every replica (at-least-once, coalesced per sink and period, retried with backoff).
export { Notifier, NOTIFY_QUEUE, type NotifierOptions, type NotifyJob, type DeliveryResult } from './outbox.js';
export { toEvent, sinkWants, type NotifyEvent } from './event.js';
export { messagesFor, eventLine, stableId, EVENTS_PER_MESSAGE, CLOUDEVENTS_SOURCE, type Message } from './payloads.js';
export { send, DeliveryError, type SendResult } from './send.js';
export { signature, verifySignature, SIGNATURE_HEADER, TIMESTAMP_HEADER, EVENT_ID_HEADER } from './sign.js';
