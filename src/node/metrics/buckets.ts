// Histogram buckets in seconds, one set per kind of duration: what each spans decides where the resolution is.

/** An fsynced LevelDB batch or a peer's append round trip: 0.1 ms (a fast disk) to seconds (a sick one). */
export const DISK_AND_NETWORK_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** An API call, up to blocked Acquires that wait for seconds. */
export const CALL_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A snapshot's capture and encoding: milliseconds for a small state, seconds at the limits. */
export const SNAPSHOT_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * A lock's wait or hold, measured between two log entries' `now` (whole milliseconds): 1 ms (an immediate
 * grant or a quick critical section) to an hour (a long-held leadership lock). Immediate grants (wait 0)
 * all fall in the first bucket.
 */
export const LOCK_SECONDS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
