import * as zlib from 'zlib';

/**
 * CRC-32 (IEEE, as zlib/gzip) of a byte range. Uses Node's native zlib.crc32 (Node >= 20.15) and falls back
 * to a table-driven implementation on older runtimes.
 */
export const crc32: (data: Uint8Array) => number = (() => {
  const native = (zlib as unknown as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  if (typeof native === 'function') return (data: Uint8Array) => native(data) >>> 0;
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return (data: Uint8Array) => {
    let crc = 0xffffffff;
    // Hot loop: i < data.length by the loop condition, and the table index is a byte (& 0xff) of 256 entries.
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- indexes in bounds by the loop condition
    for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
    return (crc ^ 0xffffffff) >>> 0;
  };
})();

/** Length of the checksum header in front of every stored value. */
export const FRAME_HEADER = 4;

/** [crc32(payload) as uint32 big-endian][payload]. */
export function frame(payload: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(FRAME_HEADER + payload.length);
  out.writeUInt32BE(crc32(payload), 0);
  out.set(payload, FRAME_HEADER);
  return out;
}

/** The payload of a framed value (a view), or undefined when it is too short or its checksum does not match. */
export function unframe(value: Uint8Array): Uint8Array | undefined {
  if (value.length < FRAME_HEADER) return undefined;
  const expected = new DataView(value.buffer, value.byteOffset, value.byteLength).getUint32(0); // big-endian
  const payload = value.subarray(FRAME_HEADER);
  return crc32(payload) === expected ? payload : undefined;
}
