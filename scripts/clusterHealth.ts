// What the local cluster script learns from the nodes themselves: their Status answers over gRPC (TLS with the
// development CA), whether a process is paused, and the end of a node's log when it did not come up.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { FenceLockClient, type EndpointStatus } from '../src/client';

export interface ClusterMember {
  id: string;
  configFile: string;
  listen: string;
}

/** Each member's Status answer (or why there is none), asked of every member at once. */
export async function askStatus(members: ClusterMember[], certsDir: string, timeoutMs = 1_000): Promise<EndpointStatus[]> {
  const client = new FenceLockClient({
    endpoints: members.map((m) => m.listen),
    tls: { ca: path.join(certsDir, 'ca.pem') },
    requestTimeoutMs: timeoutMs,
    totalTimeoutMs: timeoutMs,
  });
  try {
    return await client.statusAll();
  } finally {
    await client.close();
  }
}

/** Why a node is not up: it exited (with its code or signal), or it did not answer in time. */
export interface StartFailure {
  id: string;
  why: string;
}

/**
 * Polls until every member in `waitFor` answers Status (and, with `needLeader`, one answer names a leader),
 * or until one of them has exited (`exitOf`), or `timeoutMs` passes. Resolves with the failures (none: all
 * serving) and the last answers.
 */
export async function waitServing(
  members: ClusterMember[],
  waitFor: string[],
  certsDir: string,
  exitOf: (id: string) => string | undefined,
  timeoutMs: number,
  needLeader: boolean,
): Promise<{ failures: StartFailure[]; rows: EndpointStatus[] }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = waitFor.flatMap((id) => {
      const why = exitOf(id);
      return why ? [{ id, why }] : [];
    });
    if (dead.length > 0) return { failures: dead, rows: [] };
    const rows = await askStatus(members, certsDir);
    const silent = waitFor.filter((id) => !rows[members.findIndex((m) => m.id === id)]?.ok);
    const leader = !needLeader || rows.some((r) => r.ok && r.status.leader !== '');
    if (silent.length === 0 && leader) return { failures: [], rows };
    if (Date.now() > deadline) {
      const why = `did not answer Status within ${timeoutMs / 1000} s`;
      const failures = silent.length > 0 ? silent.map((id) => ({ id, why })) : waitFor.map((id) => ({ id, why: `no leader elected within ${timeoutMs / 1000} s` }));
      return { failures, rows };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The last `n` lines of a log file ('' when there is none). */
export function tailLog(file: string, n: number): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((l) => l.trim() !== '').slice(-n);
}

/** 'paused' for a process stopped by SIGSTOP (Linux /proc), else 'running'. */
export function processState(pid: number): 'running' | 'paused' {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 3, after the command name in parentheses (which may itself hold spaces or parentheses).
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T') ? 'paused' : 'running';
  } catch {
    return 'running';
  }
}
