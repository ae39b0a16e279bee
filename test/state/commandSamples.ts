// One sample of every kind of log entry, in an order that applies meaningfully on a fresh machine: the
// bytes today's codec gives them, and what decoding and applying those bytes yields, are kept as fixtures
// (fixtures/commandEntries.json), so that a change to the codec or the dispatch cannot change either.
import type { Command } from '../../src/state';

const s1 = '0'.repeat(31) + '1';
const s2 = '0'.repeat(31) + '2';
const s3 = '0'.repeat(31) + '3';
const req = (requestId: number, extra: object = {}): { clientId: string; requestId: number; now: number } => ({
  clientId: 'c1',
  requestId,
  now: 1_000 + requestId,
  ...extra,
});
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Commands as today's code encodes them (name -> command). */
export const COMMAND_SAMPLES: ReadonlyArray<readonly [string, Command]> = [
  ['open s1', { type: 'OpenSession', ...req(1), sessionId: s1, ttlMs: 10_000, clientName: 'app' }],
  ['open s2 with caller', { type: 'OpenSession', ...req(1), clientId: 'b', caller: 'bob', sessionId: s2, ttlMs: 60_000, clientName: '' }],
  ['open s3 node-own', { type: 'OpenSession', clientId: '', requestId: 0, now: 1_003, sessionId: s3, ttlMs: 5_000, clientName: 'n' }],
  ['acquire s1', { type: 'Acquire', ...req(4, { ackedBelow: 2 }), lock: 'orders', sessionId: s1, tryOnly: false, waitTimeoutMs: 0 }],
  ['acquire s1 again (re-entrant)', { type: 'Acquire', ...req(5), lock: 'orders', sessionId: s1, tryOnly: true }],
  ['try s2 (held)', { type: 'Acquire', ...req(2), clientId: 'b', caller: 'bob', lock: 'orders', sessionId: s2, tryOnly: true, waitTimeoutMs: 0 }],
  ['wait s2', { type: 'Acquire', ...req(3, { ackedBelow: 3 }), clientId: 'b', caller: 'bob', lock: 'orders', sessionId: s2, tryOnly: false, waitTimeoutMs: 30_000 }],
  ['wait s3', { type: 'Acquire', ...req(8), lock: 'orders', sessionId: s3, tryOnly: false, waitTimeoutMs: 1 }],
  ['cancel s3', { type: 'CancelWait', clientId: '', requestId: 0, now: 1_009, lock: 'orders', sessionId: s3 }],
  ['cancel s3 again', { type: 'CancelWait', ...req(10), lock: 'orders', sessionId: s3 }],
  [
    'write s1',
    {
      type: 'Write',
      ...req(11),
      lock: 'orders',
      sessionId: s1,
      token: 4,
      ops: [
        { type: 'put', key: 'orders/a', value: bytes('x') },
        { type: 'put', key: 'orders/empty', value: new Uint8Array(0) },
        { type: 'delete', key: 'orders/b' },
      ],
    },
  ],
  ['write stale', { type: 'Write', ...req(12), lock: 'orders', sessionId: s1, token: 3, ops: [{ type: 'put', key: 'orders/a', value: bytes('y') }] }],
  ['write s1 duplicate', { type: 'Write', ...req(11), lock: 'orders', sessionId: s1, token: 4, ops: [{ type: 'delete', key: 'orders/zz' }] }],
  ['release wrong token', { type: 'Release', ...req(13), lock: 'orders', sessionId: s1, token: 5 }],
  ['release s1 (hand to s2)', { type: 'Release', ...req(14), lock: 'orders', sessionId: s1, token: 4 }],
  ['checkpoint', { type: 'CheckpointLeases', now: 1_015, leases: [{ sessionId: s1, remainingMs: 7_000 }, { sessionId: s2, remainingMs: 0 }] }],
  ['expire s2 and unknown', { type: 'ExpireSession', now: 1_016, sessionIds: [s2, '0'.repeat(31) + 'f'] }],
  ['close s1', { type: 'CloseSession', ...req(1, { clientId: 'a', caller: 'alice', callerToken: '0123456789abcdef' }), sessionId: s1 }],
  ['revoke s3', { type: 'RevokeSession', ...req(1, { clientId: 'o', caller: 'ops' }), sessionId: s3 }],
  ['move key', { type: 'MoveKeys', ...req(2, { clientId: 'o', caller: 'ops' }), key: 'orders/a', toLock: 'other' }],
  ['move prefix', { type: 'MoveKeys', ...req(20), prefix: 'orders/', toLock: 'third' }],
  ['move every key', { type: 'MoveKeys', ...req(21), prefix: '', toLock: 'orders' }],
  ['auth user_add', { type: 'AuthChange', ...req(22), change: { op: 'user_add', user: 'alice' } }],
  ['auth role_grant', { type: 'AuthChange', ...req(23), change: { op: 'role_grant', role: 'r', perm: 'write', prefix: 'orders/', version: 1 } }],
  ['auth role_quota value', { type: 'AuthChange', ...req(24), change: { op: 'role_quota', role: 'r', quota: 'store_bytes', value: 2 ** 39, version: 1 } }],
  ['auth role_quota unset', { type: 'AuthChange', ...req(25), change: { op: 'role_quota', role: 'r', quota: 'keys' } }],
  ['auth token_issue', { type: 'AuthChange', ...req(26), change: { op: 'token_issue', user: 'alice', tokenId: 'fedcba9876543210', tokenHash: 'a'.repeat(64), version: 1 } }],
  ['auth enable', { type: 'AuthChange', ...req(27), change: { op: 'enable', user: 'ops', version: 1 } }],
  ['invalid body (empty lock)', { type: 'Acquire', ...req(28), lock: '', sessionId: s1, tryOnly: true, waitTimeoutMs: 0 }],
  ['invalid meta (requestId 0)', { type: 'CloseSession', clientId: 'c2', requestId: 0, now: 1_029, sessionId: s1 }],
  ['invalid ttl', { type: 'OpenSession', ...req(30), sessionId: s2, ttlMs: 1, clientName: 'x' }],
  ['invalid retried (duplicate of the invalid one)', { type: 'Acquire', ...req(28), lock: '', sessionId: s1, tryOnly: true, waitTimeoutMs: 0 }],
];

/** Entries that today's encoder no longer writes but a log may hold (name -> hex), and bytes that are no command. */
export const LEGACY_ENTRIES: ReadonlyArray<readonly [string, string]> = [
  // Command{ now = 2000, expire_session (12) = SessionRef{ session_id = s1 } }: the single form of old logs.
  ['expire_session single form', '20d00f' + '6222' + '0a20' + Buffer.from(s1).toString('hex')],
  // Command{ client_id 'c1', request_id 40, now 2040, auth_change{ op 'user_add', user 'x' } }: no version.
  ['auth change without version', '0a0263311028' + '20f80f' + '9a010d' + '0a08757365725f616464' + '120178'],
  ['no body', ''],
  ['garbage', 'ffffff'],
];
