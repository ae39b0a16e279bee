import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Hash } from 'node:crypto';
import type { SnapshotInfo, SnapshotSink } from '../client';
import { checksumOf, encodeHeader, headerPrefix, type BackupHeader } from '../codec/backupFile';

/**
 * Writes a backup streamed from the leader to FILE.tmp (mode 0600: the state holds session ids and token
 * hashes): a header of the right length first, the data after it as it arrives; then the real header (its
 * checksum known only at the end), fsync, rename to FILE and fsync of the folder. FILE is whole or untouched.
 */
export class BackupWriter implements SnapshotSink {
  readonly tmp: string;
  private fd: fs.promises.FileHandle | undefined;
  private hash: Hash | undefined;
  private prefix: Buffer | undefined;
  private position = 0;
  private taken: BackupHeader | undefined;

  constructor(
    readonly file: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.tmp = `${file}.tmp`;
  }

  async header(info: SnapshotInfo): Promise<void> {
    const h: BackupHeader = { index: Number(info.index), term: Number(info.term), size: info.size, voters: info.voters, takenAt: this.now().toISOString() };
    this.taken = h;
    this.prefix = headerPrefix(h);
    this.hash = checksumOf(this.prefix);
    this.fd = await fs.promises.open(this.tmp, 'w', 0o600);
    // Room for the header: rewritten with its checksum once the data is in.
    await this.write(Buffer.alloc(this.prefix.length + 32));
  }

  async data(chunk: Buffer): Promise<void> {
    this.hash?.update(chunk);
    await this.write(chunk);
  }

  /** The stream ended whole: the header goes in, then the file takes FILE's place. */
  async commit(): Promise<BackupHeader> {
    const { fd, hash, prefix, taken: h } = this;
    if (!fd || !hash || !prefix || !h) throw new Error('backup: no header was received');
    await fd.write(encodeHeader(prefix, hash.digest()), 0, undefined, 0);
    await fd.sync();
    await fd.close();
    this.fd = undefined;
    await fs.promises.rename(this.tmp, this.file);
    const dir = await fs.promises.open(path.dirname(path.resolve(this.file)), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    return h;
  }

  /** After a failure: FILE.tmp goes, FILE stays as it was. */
  async abandon(): Promise<void> {
    await this.fd?.close().catch(() => undefined);
    this.fd = undefined;
    await fs.promises.rm(this.tmp, { force: true });
  }

  private async write(bytes: Buffer): Promise<void> {
    if (!this.fd) throw new Error('backup: data before the header');
    let off = 0;
    while (off < bytes.length) {
      const { bytesWritten } = await this.fd.write(bytes, off, bytes.length - off, this.position);
      off += bytesWritten;
      this.position += bytesWritten;
    }
  }
}
