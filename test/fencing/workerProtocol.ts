// What the test and its fencingWorker processes say to each other (kept apart: importing the worker runs it).

export interface WorkerConfig {
  name: string;
  endpoints: string[];
  rows: number;
  /** The least time the run lasts; it then goes on until it has exercised enough (runWorkers decides). */
  durationMs: number;
  ttlMs: number;
  /**
   * Where writes go: POST <url>/accounts/<row>; fencedUpdate on the account table of a PostgreSQL or MariaDB URL
   * (audit rows alongside); or redisFencing.fencedUpdate of `<prefix>row:<row>` (audit entries in the stream
   * `<prefix>audit`).
   */
  target: { kind: 'http'; url: string } | { kind: 'pg'; url: string } | { kind: 'mysql'; url: string } | { kind: 'redis'; url: string; prefix: string };
}

/** A worker's record of one write attempt. */
export interface Attempt {
  k: 'attempt';
  worker: string;
  row: number;
  token: string;
  step: string;
  retry: boolean;
  /** APPLIED, REPLAYED, STALE, STALE_STEP, WRONG_LOCK, NOT_FOUND, `ERROR <status>` or TRANSPORT_ERROR (no answer). */
  outcome: string;
}

/** An attempt without an answer: it may or may not have been applied. */
export const TRANSPORT_ERROR = 'ERROR no answer:';

