// The labels a session is opened with: by default host and pid (so `fencelock describe` answers "who holds
// it"), then the client's own labels, then the session's; later ones win. Checked here against the same limits
// the server applies, so a bad label fails before anything is sent.
import { hostname } from 'node:os';
import { labelsFromRecord, labelsProblem, labelsToRecord, type SessionLabel } from '../protocol/labels';
import type { SessionDetails } from './types';
import type { SessionInfo__Output } from '../protocol/generated/fencelock/v1/SessionInfo';
import { FenceLockError } from './errors';

export type LabelMap = Readonly<Record<string, string>>;

/** host and pid of this process, the labels a session gets unless the client turns them off. */
export function processLabels(): LabelMap {
  return { host: hostname(), pid: String(process.pid) };
}

/** The labels to send, checked; throws INVALID_ARGUMENT naming the limit a label breaks. */
export function sessionLabels(...layers: (LabelMap | undefined)[]): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const layer of layers) if (layer !== undefined) Object.assign(merged, layer);
  const sorted: SessionLabel[] = labelsFromRecord(merged);
  const problem = labelsProblem(sorted);
  if (problem !== null) throw new FenceLockError('INVALID_ARGUMENT', problem);
  return labelsToRecord(sorted);
}

/** A SessionInfo from the wire (null stays null: no holder). */
export function toSessionDetails(s: SessionInfo__Output | null | undefined): SessionDetails | null {
  if (s === null || s === undefined) return null;
  return { handle: s.handle, clientName: s.clientName, labels: { ...(s.labels ?? {}) } };
}
