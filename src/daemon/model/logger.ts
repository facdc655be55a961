// The daemon's logger port: the slice of a pino logger every stage writes to, and a silent one.

/** The slice of a pino logger the daemon uses. */
export interface DaemonLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

export const silentLogger: DaemonLogger = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };
