import pino from 'pino';

export type Logger = pino.Logger;

/** Structured JSON logs on stderr; every line carries the node id (term and role are added as they change). */
export function createLogger(nodeId: string, level: string): Logger {
  return pino({ level, base: { node: nodeId } }, pino.destination({ fd: 2, sync: false }));
}
