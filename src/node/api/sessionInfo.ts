// A session as a caller who may describe its lock sees it (SessionInfo in lock.proto): the public handle and
// what its client said of itself. Describe and Watch (and the lock listing) build it here, never with the id.
import type { SessionInfo__Output } from '../../protocol/generated/fencelock/v1/SessionInfo';
import { labelsToRecord, type SessionLabels } from '../../protocol/labels';
import { publicSessionId } from './publicSessionId';

export interface SessionFacts {
  sessionId: string;
  clientName: string;
  labels: SessionLabels;
}

export function sessionInfo(s: SessionFacts, handle = publicSessionId(s.sessionId)): SessionInfo__Output {
  return { handle, clientName: s.clientName, labels: labelsToRecord(s.labels) };
}
