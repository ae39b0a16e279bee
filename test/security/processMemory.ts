// Memory of a node process measured from outside: its resident set from /proc/<pid>/status, sampled while an
// attack runs so that a spike that is freed again still counts.
import { readFileSync } from 'node:fs';

/** The process's resident set size (VmRSS) in MiB. */
export function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m?.[1]) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

export interface RssReport {
  beforeMiB: number;
  peakMiB: number;
  afterMiB: number;
  /** peak - before: what the attack made the process hold at most. */
  growthMiB: number;
}

/** Samples the RSS of `pid` every `everyMs` from now until stop(). */
export function watchRss(pid: number, everyMs = 100): { stop(): RssReport } {
  const beforeMiB = rssMiB(pid);
  let peakMiB = beforeMiB;
  const timer = setInterval(() => {
    try {
      peakMiB = Math.max(peakMiB, rssMiB(pid));
    } catch {
      clearInterval(timer); // the process is gone: stop() reports it
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const afterMiB = rssMiB(pid);
      peakMiB = Math.max(peakMiB, afterMiB);
      return { beforeMiB, peakMiB, afterMiB, growthMiB: peakMiB - beforeMiB };
    },
  };
}

/** One line for the test output, so that a run records its figures. */
export function formatRss(what: string, r: RssReport): string {
  const f = (n: number): string => n.toFixed(0);
  return `${what}: RSS ${f(r.beforeMiB)} MiB before, peak ${f(r.peakMiB)} MiB (+${f(r.growthMiB)}), ${f(r.afterMiB)} MiB after`;
}
