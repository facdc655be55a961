// Subscribe a table of listeners to the daemon's emitter and get one unsubscribe back.
import type { EventEmitter } from 'node:events';
import type { DaemonEmitter, DaemonEvents } from '../daemon/index.js';

export type DaemonListeners = { [K in keyof DaemonEvents]?: (payload: DaemonEvents[K]) => void };

export function subscribe(emitter: DaemonEmitter, listeners: DaemonListeners): () => void {
  // The table is typed per event above; the plain EventEmitter view only wires it up.
  const plain: EventEmitter = emitter;
  const entries = Object.entries(listeners) as [string, (payload: unknown) => void][];
  for (const [event, listener] of entries) plain.on(event, listener);
  return () => {
    for (const [event, listener] of entries) plain.off(event, listener);
  };
}
