// Session labels: what a client says of itself when it opens a session (host, pid, free-form key=value),
// shown beside the session's public handle wherever a holder or waiter is shown. One check for client,
// API and state machine, so all three refuse the same labels with the same words.
import { MAX_LABELS_BYTES, MAX_LABEL_KEY_BYTES, MAX_LABEL_VALUE_BYTES, MAX_SESSION_LABELS } from './limits';

export interface SessionLabel {
  readonly key: string;
  readonly value: string;
}

/** Labels in key order (code point order; keys are ASCII), each key once: the one form the log and snapshots hold. */
export type SessionLabels = readonly SessionLabel[];

const KEY = /^[a-z0-9_.-]+$/;
// Control characters would let a label rewrite the terminal it is printed on.
// eslint-disable-next-line no-control-regex -- matching them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// UTF-8 cannot carry a lone surrogate: such a value would not survive a snapshot unchanged.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `labels` may not be a session's labels (naming the limit), or null. Keys must come sorted, each once. */
export function labelsProblem(labels: SessionLabels): string | null {
  if (labels.length > MAX_SESSION_LABELS) return `labels: at most ${MAX_SESSION_LABELS} (MAX_SESSION_LABELS), got ${labels.length}`;
  let total = 0;
  let previous = '';
  for (const { key, value } of labels) {
    const problem = keyProblem(key) ?? valueProblem(key, value);
    if (problem !== null) return problem;
    if (previous !== '' && !(previous < key)) return `labels: keys must be sorted and distinct (${JSON.stringify(key)} after ${JSON.stringify(previous)})`;
    previous = key;
    total += key.length + Buffer.byteLength(value, 'utf8');
  }
  if (total > MAX_LABELS_BYTES) return `labels: ${total} bytes of keys and values, over ${MAX_LABELS_BYTES} (MAX_LABELS_BYTES)`;
  return null;
}

function keyProblem(key: unknown): string | null {
  if (typeof key !== 'string' || !KEY.test(key) || key.length > MAX_LABEL_KEY_BYTES) {
    return `label key ${JSON.stringify(key)}: 1..${MAX_LABEL_KEY_BYTES} bytes (MAX_LABEL_KEY_BYTES) of a-z 0-9 _ . -`;
  }
  return null;
}

function valueProblem(key: string, value: unknown): string | null {
  if (typeof value !== 'string') return `label ${key}: the value must be a string`;
  if (LONE_SURROGATE.test(value)) return `label ${key}: the value must be well-formed Unicode`;
  if (CONTROL.test(value)) return `label ${key}: the value must not contain control characters`;
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_LABEL_VALUE_BYTES) return `label ${key}: the value is ${bytes} bytes, over ${MAX_LABEL_VALUE_BYTES} (MAX_LABEL_VALUE_BYTES)`;
  return null;
}

/** Labels given as key -> value (a proto map, an option), in the sorted form. */
export function labelsFromRecord(record: Readonly<Record<string, string>>): SessionLabel[] {
  return Object.keys(record)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((key) => ({ key, value: record[key] as string }));
}

/** Labels as key -> value (for a proto map or JSON output); keys stay in sorted order for string keys. */
export function labelsToRecord(labels: SessionLabels): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { key, value } of labels) out[key] = value;
  return out;
}
