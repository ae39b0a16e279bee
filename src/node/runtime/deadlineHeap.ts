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
    return this.deadlines.length > 0 ? this.deadlines[0]! : Infinity;
  }

  /** Removes and returns the item with the earliest deadline. */
  pop(): T | undefined {
    if (this.items.length === 0) return undefined;
    const top = this.items[0];
    const lastDeadline = this.deadlines.pop()!;
    const lastItem = this.items.pop()!;
    if (this.items.length > 0) {
      this.deadlines[0] = lastDeadline;
      this.items[0] = lastItem;
      this.down(0);
    }
    return top;
  }

  clear(): void {
    this.deadlines.length = 0;
    this.items.length = 0;
  }

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
}
