/**
 * Errors of the storage layer besides StorageCorruptError (./types): they say what the caller did wrong or
 * why the store cannot be used, never "the data on disk is bad".
 */

/**
 * A persist/saveSnapshot call asked for something that would break the log's invariants (a gap, a term going
 * back, a vote changed within a term, a snapshot older than the stored one...). Nothing was written; the
 * storage is still usable. It signals a bug in the caller.
 */
export class StorageUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageUsageError';
  }
}

/** The LevelDB directory is locked by another process or another open instance in this process. */
export class StorageLockedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageLockedError';
  }
}

/**
 * An earlier write failed (e.g. fsync/I/O error): the durable state is unknown, so this instance refuses
 * every further call. Reopen the directory (normally: restart the node) to continue.
 */
export class StorageFailedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageFailedError';
  }
}
