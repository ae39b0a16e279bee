/**
 * Defects planted in the real client library for one simulated run (`--bug NAME`), to show the end checks
 * catch them. Test-only: the library has no switch for them; each is a patch of a library prototype that
 * plantClientBug applies and its returned function takes back (seeds of one process run one at a time).
 */
import { Router } from '../../src/client/router';
import { Session } from '../../src/client/session';

export interface ClientBug {
  /** Patches the library; returns the undo. */
  plant?: () => () => void;
  /** The clients' monotonic clock rate, in place of one within CLOCK_RATE_BOUND. */
  clientClockRate?: number;
}

export const CLIENT_BUGS: Readonly<Record<string, ClientBug>> = {
  // The presumed-lost rule with no safety margin: a holder believes its lock until the very end of its
  // lease estimate, which clock drift and the server's own timing can put after the server's expiry.
  'presumed-lost-without-margin': { plant: () => patch(Session.prototype, 'presumedLostAt', () => function (this: Session) {
    return (this as unknown as { leaseEndsAt: number }).leaseEndsAt;
  }) },
  // A retry under a fresh request id: the dedup table cannot tell it from a new request, so a write whose
  // answer was lost applies twice.
  'retry-with-fresh-request-id': { plant: () => {
    let fresh = 1_000_000_000;
    const attempted = new WeakSet<object>();
    return patch(Router.prototype, 'once', (once) => function (this: Router, address: string, m: unknown, req: unknown, timeoutMs: number) {
      const header = (req as { header?: object } | null)?.header;
      if (header !== undefined && typeof req === 'object' && req !== null) {
        if (attempted.has(req)) req = { ...req, header: { ...header, requestId: String(fresh++) } };
        else attempted.add(req);
      }
      return (once as (...args: unknown[]) => unknown).call(this, address, m, req, timeoutMs);
    } as unknown as typeof once);
  } },
  // Client clocks running 40% slow, forty times the documented bound (CLOCK_RATE_BOUND, 1%): the margin
  // covers drift within the bound only, and the lease promise must be seen to break beyond it (at 15% slow,
  // seeds 1..60 did not show it: the server's lease outlasts the client's estimate by a round trip and more).
  'client-clock-beyond-bound': { clientClockRate: 0.6 },
};

function patch<T extends object, K extends keyof T>(target: T, key: K, make: (original: T[K]) => T[K]): () => void {
  const original = target[key];
  target[key] = make(original);
  return () => {
    target[key] = original;
  };
}
