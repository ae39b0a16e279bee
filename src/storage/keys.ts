/** The operations of one LevelDB batch (what LevelStorage and the v1 conversion write). */
export type PutOp = { type: 'put'; key: Uint8Array; value: Uint8Array };
export type BatchOp = PutOp | { type: 'del'; key: Uint8Array };

/** LevelDB keys made of a one-byte prefix and a log index as uint64 big-endian, so that iteration follows the log. */
export const INDEX_KEY_LENGTH = 9;

export function indexKey(prefix: number, index: number): Uint8Array {
  const key = Buffer.allocUnsafe(INDEX_KEY_LENGTH);
  key[0] = prefix;
  key.writeUInt32BE(Math.floor(index / 0x1_0000_0000), 1);
  key.writeUInt32BE(index >>> 0, 5);
  return key;
}

/** The index of a key made by indexKey. */
export function indexOfKey(key: Uint8Array): number {
  const b = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  return b.readUInt32BE(1) * 0x1_0000_0000 + b.readUInt32BE(5);
}
