// The election checker can fail: each bad history below is one that electionStress.test.ts must never pass.
import { describe, expect, it } from 'vitest';
import { checkElection, type AcceptedWrite, type ElectionHistory } from './electionHistory';

const led = (token: bigint, by: string) => ({ token, by });
const wrote = (token: bigint, index: bigint, by: string): AcceptedWrite => ({ token, index, by });
const seen = (token: bigint, text: string) => ({ token, text });

/** Two leaderships (a at 5, b at 9), each writing once, seen in order by two observers. */
function sound(): ElectionHistory {
  return {
    leaderships: [led(5n, 'a'), led(9n, 'b')],
    accepted: [wrote(5n, 7n, 'a'), wrote(9n, 11n, 'b')],
    observed: [
      [seen(5n, 'a'), seen(9n, 'b')],
      [seen(9n, 'b')],
    ],
  };
}

describe('checkElection', () => {
  it('passes a sound run', () => {
    expect(checkElection(sound())).toEqual([]);
  });

  it('two leaders acting at one token', () => {
    const h = sound();
    h.leaderships.push(led(9n, 'c'));
    h.accepted.push(wrote(9n, 12n, 'c'));
    expect(checkElection(h)).toEqual(['one-leader: token 9 was led by b and again by c', 'write-leader: c wrote under token 9 (index 12), led by b']);
  });

  it('a write under a token nobody led', () => {
    const h = sound();
    h.accepted.push(wrote(10n, 12n, 'c'));
    expect(checkElection(h)).toEqual(['write-leader: c wrote under token 10 (index 12), led by nobody']);
  });

  it('a deposed leader acting after a newer one', () => {
    const h = sound();
    h.accepted.push(wrote(5n, 12n, 'a'));
    expect(checkElection(h)).toEqual(['write-order: token 5 was accepted at index 12, after token 9 at index 11']);
  });

  it('the write order is the log order, not the order the test heard of the writes', () => {
    const h = sound();
    h.accepted.reverse();
    expect(checkElection(h)).toEqual([]);
  });

  it('an observer seeing tokens out of order, or one token twice', () => {
    const h = sound();
    h.observed[0] = [seen(9n, 'b'), seen(5n, 'a')];
    h.observed[1] = [seen(9n, 'b'), seen(9n, 'b')];
    expect(checkElection(h)).toEqual(['observer-order: observer 0 reported token 5 after token 9', 'observer-order: observer 1 reported token 9 after token 9']);
  });

  it('an observer reporting a value its leader did not write', () => {
    const h = sound();
    h.observed[1] = [seen(9n, 'a')];
    expect(checkElection(h)).toEqual(['observer-value: observer 1 reported token 9 with value a, led by b']);
  });
});
