import pino from 'pino';

export type Logger = pino.Logger;

/** What every log line carries besides the node id; set once the Raft driver exists. */
export interface LogContext {
  term(): number;
  role(): string;
}

/** Structured JSON logs on stderr; every line carries the node id, and the term and role once known. */
export function createLogger(nodeId: string, level: string, context?: { current?: LogContext }): Logger {
  return pino(
    {
      level,
      base: { node: nodeId },
      mixin: () => (context?.current ? { term: context.current.term(), role: context.current.role() } : {}),
    },
    pino.destination({ fd: 2, sync: false }),
  );
}
