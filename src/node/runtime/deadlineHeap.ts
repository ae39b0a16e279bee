/** A binary min-heap of (deadline, item): the lease sweep looks only at what is due, not at every session. */
export class DeadlineHeap<T> {
  private readonly deadlines: number[] = [];
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  push(deadline: number, item: T): void {
    this.deadlines.push(deadline);
    this.items.push(item);
    this.up(this.items.length - 1);
  }

  /** The earliest deadline, or Infinity when empty. */
  peekDeadline(): number {
    return this.deadlines[0] ?? Infinity;
  }

  /** Removes and returns the item with the earliest deadline. */
  pop(): T | undefined {
    if (this.items.length === 0) return undefined;
    // The last entry takes the root's place and sinks; the old root, now last, is popped.
    this.swap(0, this.items.length - 1);
    this.deadlines.pop();
    const top = this.items.pop();
    if (this.items.length > 0) this.down(0);
    return top;
  }

  clear(): void {
    this.deadlines.length = 0;
    this.items.length = 0;
  }

  // Hot path (every lease push and sweep): the indexes below are in bounds by the loop conditions and by the
  // callers (0 <= i < n), so they are read without a check per step.
  /* eslint-disable @typescript-eslint/no-non-null-assertion -- indexes in bounds by the loop conditions */
  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.deadlines[parent]! <= this.deadlines[i]!) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < n && this.deadlines[left]! < this.deadlines[least]!) least = left;
      if (right < n && this.deadlines[right]! < this.deadlines[least]!) least = right;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }

  private swap(a: number, b: number): void {
    [this.deadlines[a], this.deadlines[b]] = [this.deadlines[b]!, this.deadlines[a]!];
    [this.items[a], this.items[b]] = [this.items[b]!, this.items[a]!];
  }
  /* eslint-enable @typescript-eslint/no-non-null-assertion */
}
