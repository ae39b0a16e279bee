/**
 * Where LevelStorage's log entries are: one segment (a LevelDB value holding consecutive entries) per
 * persisted batch, keyed by its first index. A batch then costs one LevelDB operation whatever its number of
 * entries; per-entry operations cost about 10 µs of CPU each in the Ready loop (docs/performance.md).
 *
 * Segments are ascending and contiguous. The first may begin at or below the snapshot index: a compaction
 * deletes only the segments that lie wholly at or below it, and the entries of a straddling one that the
 * snapshot covers are skipped when the log is read back. This module only plans; LevelStorage executes.
 */

/** One stored segment: the inclusive range of indexes it holds. */
export interface SegmentRef {
  first: number;
  last: number;
}

/** What one write does to the segments, in terms of the segments stored before it. */
export interface SegmentChanges {
  /** Segments to delete (by their first index). */
  deletes: number[];
  /** A segment that keeps only its entries below `keepBelow`: LevelStorage rewrites it under the same key. */
  truncate?: { segment: SegmentRef; keepBelow: number };
  /** The segments at positions front..back-1 stay (the last of them cut down when `truncate` is set). */
  front: number;
  back: number;
}

/**
 * Plans the segment changes of one write, changing nothing: LevelStorage applies them (applySegments) once
 * the write is durable. Only the ends of the list can change, so only they are visited: an append (the usual
 * write) costs nothing here, however many segments the log holds.
 * - `snapIndex`: the snapshot index after the write: segments wholly at or below it go.
 * - `cutFrom`: the first index whose stored entry the write replaces or truncates (Infinity: none). Segments
 *   from it on go; one that straddles it keeps its entries below it, unless the snapshot covers them all.
 * - `dropAll`: the write installs a snapshot from the leader, which replaces every stored entry.
 */
export function planSegments(segments: readonly SegmentRef[], snapIndex: number, cutFrom: number, dropAll: boolean): SegmentChanges {
  if (dropAll) return { deletes: segments.map((seg) => seg.first), front: 0, back: 0 };
  const deletes: number[] = [];
  let truncate: SegmentChanges['truncate'];
  let back = segments.length;
  for (let seg = segments[back - 1]; seg !== undefined && seg.last >= cutFrom; seg = segments[back - 1]) {
    // Wholly replaced, or a straddler that would keep only entries the snapshot covers: it goes.
    if (seg.first < cutFrom && cutFrom - 1 > snapIndex) {
      truncate = { segment: seg, keepBelow: cutFrom };
      break;
    }
    deletes.push(seg.first);
    back--;
  }
  let front = 0;
  for (let seg = segments[0]; front < back && seg !== undefined && seg.last <= snapIndex; seg = segments[++front]) deletes.push(seg.first);
  return { deletes, truncate, front, back };
}

/** Makes `segments` what `changes` leave of it (in place; only its ends move). */
export function applySegments(segments: SegmentRef[], changes: SegmentChanges): void {
  const { truncate, front, back } = changes;
  if (truncate !== undefined) segments[back - 1] = { first: truncate.segment.first, last: truncate.keepBelow - 1 };
  segments.length = back;
  if (front > 0) segments.splice(0, front);
}

/** The segment holding `index`, by binary search (segments are ascending and contiguous). */
export function segmentOf(segments: readonly SegmentRef[], index: number): SegmentRef | undefined {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const seg = segments[mid];
    if (seg === undefined) return undefined;
    if (index < seg.first) hi = mid - 1;
    else if (index > seg.last) lo = mid + 1;
    else return seg;
  }
  return undefined;
}
