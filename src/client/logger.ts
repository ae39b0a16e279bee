/** The logging the library does: a subset of pino's API, so a pino logger (or a child of one) fits. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => {};

/** The default: says nothing. */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };
