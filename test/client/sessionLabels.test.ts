// The labels the client library opens sessions with: host and pid by default, then the client's, then the
// session's, checked against the server's limits before anything is sent.
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { FenceLockClient, FenceLockError } from '../../src/client';
import { processLabels, sessionLabels } from '../../src/client/sessionLabels';

describe('session labels in the client', () => {
  it('layers host and pid, the client\'s and the session\'s labels, later ones winning key by key', () => {
    expect(processLabels()).toEqual({ host: hostname(), pid: String(process.pid) });
    expect(sessionLabels(processLabels(), { team: 'a', host: 'mine' }, { team: 'b' })).toEqual({ host: 'mine', pid: String(process.pid), team: 'b' });
    expect(Object.keys(sessionLabels({ z: '1', a: '2' }))).toEqual(['a', 'z']);
  });

  it('refuses labels beyond a limit with INVALID_ARGUMENT naming it, at construction and at openSession', async () => {
    const many = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, 'v']));
    expect(() => sessionLabels(processLabels(), many)).toThrow(/MAX_SESSION_LABELS/);
    expect(() => new FenceLockClient({ endpoints: ['127.0.0.1:1'], insecure: true, labels: { 'Bad Key': 'x' } })).toThrow(FenceLockError);
    const c = new FenceLockClient({ endpoints: ['127.0.0.1:1'], insecure: true, processLabels: false });
    try {
      await expect(c.openSession({ labels: { k: 'v'.repeat(257) } })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/MAX_LABEL_VALUE_BYTES/) });
    } finally {
      await c.close();
    }
  });
});
