// The pipelining window of one follower: the last index of every App message sent to it in
// replicate state and not yet acknowledged, oldest first, bounded by RaftConfig.maxInflight.

export class Inflights {
  private readonly lastIndexes: number[] = [];

  constructor(readonly capacity: number) {}

  add(lastIndex: number): void {
    this.lastIndexes.push(lastIndex);
  }

  /** An acknowledgement up to `index` frees every message that ended at or before it. */
  freeLE(index: number): void {
    let n = 0;
    while (n < this.lastIndexes.length && this.lastIndexes[n] <= index) n++;
    this.lastIndexes.splice(0, n);
  }

  full(): boolean {
    return this.lastIndexes.length >= this.capacity;
  }

  count(): number {
    return this.lastIndexes.length;
  }

  reset(): void {
    this.lastIndexes.length = 0;
  }
}
