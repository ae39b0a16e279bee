// One identity for every spelling of a member address (src/node/memberAddress.ts addressIdentity), so that
// Cluster.MemberAdd finds a duplicate however it is written.
import { describe, expect, it } from 'vitest';
import { addressIdentity, sameMemberAddress } from '../../src/node/memberAddress';

describe('member address identity', () => {
  it('takes every loopback spelling of one port for the same address', () => {
    const spellings = ['127.0.0.1:7000', 'localhost:7000', 'LocalHost.:7000', '[::1]:7000', '[0:0:0:0:0:0:0:1]:7000', '127.1:7000', '127.0.0.2:7000', '[::ffff:127.0.0.1]:7000'];
    for (const a of spellings) for (const b of spellings) expect(sameMemberAddress(a, b), `${a} and ${b}`).toBe(true);
    expect(addressIdentity('localhost:7000')).toBe('loopback:7000');
  });

  it('compares host names without case or a trailing dot, and IP literals in their shortest form', () => {
    expect(sameMemberAddress('Node1.Example.net:7000', 'node1.example.net.:7000')).toBe(true);
    expect(sameMemberAddress('[2001:DB8:0:0::1]:7000', '[2001:db8::1]:7000')).toBe(true);
    expect(sameMemberAddress('10.0.0.1:7000', '10.0.0.1:07000')).toBe(true);
  });

  it('keeps apart what may be different listeners', () => {
    expect(sameMemberAddress('127.0.0.1:7000', '127.0.0.1:7001')).toBe(false);
    expect(sameMemberAddress('localhost:7000', '10.0.0.1:7000')).toBe(false);
    expect(sameMemberAddress('node1.example.net:7000', 'node2.example.net:7000')).toBe(false);
    expect(sameMemberAddress('[2001:db8::1]:7000', '[2001:db8::2]:7000')).toBe(false);
    expect(sameMemberAddress('10.0.0.1:7000', '10.0.0.2:7000')).toBe(false);
  });
});
