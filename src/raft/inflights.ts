// The pipelining window of one follower: the App messages sent to it in replicate state and not yet
// acknowledged, oldest first. Bounded by count (RaftConfig.maxInflight) and by the summed entry data of
// those messages (RaftConfig.maxInflightBytes), so a few huge entries cannot pile up megabytes per follower.

export class Inflights {
  /** Last index of each message in flight, oldest first. */
  private readonly lastIndexes: number[] = [];
  /** Entry data bytes of each message in flight, parallel to lastIndexes. */
  private readonly sizes: number[] = [];
  private bytes = 0;

  constructor(
    readonly capacity: number,
    readonly maxBytes = Infinity,
  ) {}

  add(lastIndex: number, bytes = 0): void {
    this.lastIndexes.push(lastIndex);
    this.sizes.push(bytes);
    this.bytes += bytes;
  }

  /** An acknowledgement up to `index` frees every message that ended at or before it. */
  freeLE(index: number): void {
    let n = 0;
    for (const last of this.lastIndexes) {
      if (last > index) break;
      this.bytes -= this.sizes[n] ?? 0;
      n++;
    }
    this.lastIndexes.splice(0, n);
    this.sizes.splice(0, n);
  }

  full(): boolean {
    return this.lastIndexes.length >= this.capacity || this.bytes >= this.maxBytes;
  }

  count(): number {
    return this.lastIndexes.length;
  }
}
