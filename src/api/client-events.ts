// The client's typed event map: telemetry subscribes here; the client itself never logs.
import { EventEmitter } from 'node:events';
import type { HttpMethod, Operation } from './endpoints.js';
import type { ApiErrorCode } from './errors.js';

export interface ApiClientEvents {
  /** One per attempt, successful or not. status is null when no response arrived. */
  request: {
    operation: Operation;
    method: HttpMethod;
    status: number | null;
    code?: ApiErrorCode;
    durationMs: number;
    attempt: number;
    requestId?: string;
  };
  /** An attempt failed and another follows after delayMs. */
  retry: { operation: Operation; code: ApiErrorCode; attempt: number; delayMs: number };
  /** A 429: the platform's window resets in resetSeconds. */
  rateLimited: { operation: Operation; resetSeconds: number };
}

export type ApiClientEventName = keyof ApiClientEvents;

/** An EventEmitter typed over ApiClientEvents. */
export class ApiClientEmitter extends EventEmitter {
  override emit<K extends ApiClientEventName>(event: K, payload: ApiClientEvents[K]): boolean {
    return super.emit(event, payload);
  }
  override on<K extends ApiClientEventName>(event: K, listener: (payload: ApiClientEvents[K]) => void): this {
    return super.on(event, listener);
  }
  override once<K extends ApiClientEventName>(event: K, listener: (payload: ApiClientEvents[K]) => void): this {
    return super.once(event, listener);
  }
  override off<K extends ApiClientEventName>(event: K, listener: (payload: ApiClientEvents[K]) => void): this {
    return super.off(event, listener);
  }
}
