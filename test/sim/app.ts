/**
 * The simulated application: a replicated append-only log of proposed values. Each node keeps the sequence
 * of (index, value) it applied; no-op entries (empty data) advance the applied index but add no value.
 * A snapshot's data is the serialized applied sequence, so installing one replaces the state wholesale.
 */
import type { Entry, Snapshot } from '../../src/raft/types';

export type AppliedValue = readonly [index: number, value: string];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeValue(value: string): Uint8Array {
  return encoder.encode(value);
}

export function decodeValue(data: Uint8Array): string {
  return decoder.decode(data);
}

export class AppState {
  appliedIndex = 0;
  values: AppliedValue[] = [];

  static fromSnapshot(snap: Snapshot | undefined): AppState {
    const app = new AppState();
    if (snap) app.install(snap);
    return app;
  }

  apply(e: Entry): void {
    if (e.data.length > 0) this.values.push([e.index, decodeValue(e.data)]);
    this.appliedIndex = e.index;
  }

  install(snap: Snapshot): void {
    this.values = decodeSnapshotData(snap.data);
    this.appliedIndex = snap.meta.index;
  }

  serialize(): Uint8Array {
    return encoder.encode(JSON.stringify(this.values));
  }
}

export function decodeSnapshotData(data: Uint8Array): AppliedValue[] {
  const parsed: unknown = JSON.parse(decoder.decode(data));
  if (!Array.isArray(parsed)) throw new Error('snapshot data is not an applied sequence');
  return parsed.map((p: unknown) => {
    if (!Array.isArray(p) || typeof p[0] !== 'number' || typeof p[1] !== 'string') {
      throw new Error('snapshot data holds a malformed applied value');
    }
    return [p[0], p[1]] as const;
  });
}
