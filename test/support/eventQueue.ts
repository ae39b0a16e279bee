/**
 * A binary min-heap of events ordered by (virtual time, insertion sequence). Ties in time are broken by the
 * order of scheduling, so the order of events is a pure function of the run's choices.
 */
export class EventQueue<T> {
  private heap: Array<{ time: number; seq: number; item: T }> = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(time: number, item: T): void {
    const node = { time, seq: this.seq++, item };
    const h = this.heap;
    h.push(node);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  /** Time of the earliest event, or undefined when empty. */
  peekTime(): number | undefined {
    return this.heap[0]?.time;
  }

  pop(): { time: number; item: T } | undefined {
    const h = this.heap;
    if (h.length === 0) return undefined;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && less(h[l]!, h[m]!)) m = l;
        if (r < h.length && less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return { time: top.time, item: top.item };
  }
}

function less(x: { time: number; seq: number }, y: { time: number; seq: number }): boolean {
  return x.time < y.time || (x.time === y.time && x.seq < y.seq);
}
