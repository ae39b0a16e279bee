// The client name a CLI command opens its session with (`fencelock lock NAME (pid 42)`), shown by describe,
// locks and session list. The server refuses a name over MAX_CLIENT_NAME_BYTES, while a lock name alone
// may be 256 bytes (and `lock A B C` names up to 64 of them): the name is cut to fit, never refused.
import { MAX_CLIENT_NAME_BYTES } from '../protocol/limits';

const ELLIPSIS = '…';

/** `${what} (pid N)`, with `what` cut (at a character boundary, ending in …) so that the whole fits. */
export function cliSessionName(what: string, pid: number): string {
  const tail = ` (pid ${pid})`;
  return `${cutUtf8(what, MAX_CLIENT_NAME_BYTES - Buffer.byteLength(tail))}${tail}`;
}

function cutUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const room = maxBytes - Buffer.byteLength(ELLIPSIS);
  let out = '';
  let bytes = 0;
  // Code point by code point, so that no character is split and the name stays well-formed UTF-8.
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > room) break;
    out += ch;
    bytes += n;
  }
  return `${out}${ELLIPSIS}`;
}
