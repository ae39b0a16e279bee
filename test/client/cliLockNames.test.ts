// How `fencelock lock` tells lock names from CMD (issue 33: `lock A B -- CMD`), and the session name it opens
// its session with, cut to what the server accepts.
import { describe, expect, it } from 'vitest';
import { lockNamesAndCommand, wordsAfterDashDash } from '../../src/cli/invocation';
import { cliSessionName } from '../../src/cli/sessionName';
import { MAX_CLIENT_NAME_BYTES } from '../../src/protocol/limits';

describe('lockNamesAndCommand', () => {
  /** As commander hands them over: the words of `lock ARGS`, the first `--` dropped. */
  const split = (args: string[]): { names: string[]; command: string[] } => {
    const end = args.indexOf('--');
    const positionals = end < 0 ? args : [...args.slice(0, end), ...args.slice(end + 1)];
    return lockNamesAndCommand(positionals[0]!, positionals.slice(1), wordsAfterDashDash(args));
  };

  it('takes every word before -- as a name and the rest as CMD', () => {
    expect(split(['a', 'b', 'c', '--', 'sh', '-c', 'x'])).toEqual({ names: ['a', 'b', 'c'], command: ['sh', '-c', 'x'] });
    expect(split(['a', '--', 'true'])).toEqual({ names: ['a'], command: ['true'] });
    expect(split(['a', 'b', '--'])).toEqual({ names: ['a', 'b'], command: [] });
  });

  it('without -- keeps the old meaning: NAME, then CMD', () => {
    expect(split(['a', 'ls', 'dir'])).toEqual({ names: ['a'], command: ['ls', 'dir'] });
    expect(split(['a'])).toEqual({ names: ['a'], command: [] });
  });

  it('counts a -- inside CMD as CMD\'s (only the first one splits)', () => {
    expect(split(['a', 'b', '--', 'git', 'log', '--', 'file'])).toEqual({ names: ['a', 'b'], command: ['git', 'log', '--', 'file'] });
  });
});

describe('cliSessionName', () => {
  it('keeps a short name whole', () => {
    expect(cliSessionName('fencelock lock a b', 42)).toBe('fencelock lock a b (pid 42)');
  });

  it('cuts a long one to MAX_CLIENT_NAME_BYTES at a character boundary, keeping the pid', () => {
    const name = cliSessionName(`fencelock lock ${'é'.repeat(300)}`, 123456);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(MAX_CLIENT_NAME_BYTES);
    expect(name.endsWith('… (pid 123456)')).toBe(true);
    expect(name).not.toContain('\uFFFD');
    expect(Buffer.from(name, 'utf8').toString('utf8')).toBe(name);
  });
});
