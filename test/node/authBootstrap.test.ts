// The leader's enable (src/node/runtime/authBootstrap.ts, issue 28 item 2): an enable the state machine
// refuses would be refused again on the same state, so it is logged once, as an error saying why, and not
// proposed again (it was proposed every tick, some 20 entries a second, without a word). A proposal that
// fails for want of a leader is retried.
import { describe, expect, it } from 'vitest';
import type { Command, Result } from '../../src/state';
import { AUTH_RULES_CLOSED_WHEN_OFF } from '../../src/state';
import { AuthBootstrap } from '../../src/node/runtime/authBootstrap';
import type { NodePorts, TimerHandle } from '../../src/node/runtime/ports';

/** Virtual timers: fire() runs what is due, one tick at a time. */
function rig(answer: () => Promise<{ result: Result }>) {
  let due: Array<{ id: number; fn: () => void }> = [];
  let next = 0;
  const ports = {
    clock: { monotonicMs: () => 0, wallMs: () => 1_000 },
    timers: {
      setTimeout: (fn: () => void): TimerHandle => {
        const t = { id: ++next, fn };
        due.push(t);
        return t;
      },
      clearTimeout: (h: TimerHandle | undefined) => {
        due = due.filter((t) => t.id !== h?.id);
      },
      defer: (fn: () => void) => fn(),
    },
    random: { fraction: () => 0, bytes: (n: number) => new Uint8Array(n) },
  } as NodePorts;
  const proposed: Command[] = [];
  const lines: Array<{ level: string; obj: unknown; msg: string }> = [];
  const log = (level: string) => (obj: unknown, msg: string) => lines.push({ level, obj, msg });
  const logger = { info: log('info'), warn: log('warn'), error: log('error') };
  const driver = { isLeader: () => true, hasAppliedOwnTerm: () => true };
  const app = { machine: { auth: { authEnabled: () => false } } };
  const config = { tickMs: 50, auth: { enabled: true, admin: 'ops' } };
  const boot = new AuthBootstrap(config as never, driver as never, app as never, ports, (c) => {
    proposed.push(c);
    return answer();
  }, logger as never);
  const tick = async (): Promise<void> => {
    const now = due;
    due = [];
    for (const t of now) t.fn();
    await new Promise((r) => setImmediate(r));
  };
  return { boot, proposed, lines, tick };
}

describe('AuthBootstrap', () => {
  it('proposes enable under the current rules, and after a refusal logs why once and proposes it no more', async () => {
    const r = rig(async () => ({ result: { status: 'refused', reason: 'AUTH_FULL', watermark: 0, subject: 'roles_per_user' } }));
    r.boot.start();
    for (let i = 0; i < 40; i++) await r.tick();
    expect(r.proposed).toHaveLength(1);
    expect(r.proposed[0]).toMatchObject({ type: 'AuthChange', change: { op: 'enable', user: 'ops', version: AUTH_RULES_CLOSED_WHEN_OFF } });
    const errors = r.lines.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toMatch(/refused to turn auth on; not proposing it again until this node restarts/);
    expect(errors[0]!.obj).toMatchObject({ admin: 'ops', why: 'AUTH_FULL (roles_per_user)' });
    r.boot.stop();
  });

  it('retries a proposal that failed (no leader, a timeout) on a later tick', async () => {
    let calls = 0;
    const r = rig(async () => {
      calls++;
      if (calls < 3) throw new Error('not leader');
      return { result: { status: 'auth_changed' } };
    });
    r.boot.start();
    for (let i = 0; i < 10; i++) await r.tick();
    expect(r.proposed.length).toBeGreaterThanOrEqual(3);
    expect(r.lines.filter((l) => l.level === 'error')).toEqual([]);
    r.boot.stop();
  });
});
