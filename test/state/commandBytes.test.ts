// The bytes of log entries do not change: fixtures/commandEntries.json holds what the codec wrote before the
// command registry (issue 31), what those bytes decoded to and what applying them in order gave, and the
// snapshot after (format 4). An old log must decode and apply the same, to the same state, and a new entry
// must be written the same.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeCommand, encodeCommand } from '../../src/codec/commandCodec';
import { LockStateMachine, validateCommand } from '../../src/state';
import { COMMAND_SAMPLES, LEGACY_ENTRIES } from './commandSamples';

interface Fixture {
  name: string;
  hex: string;
  decoded?: unknown;
  applied?: unknown;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
/** JSON with byte arrays as hex, as the fixtures hold them. */
const plain = (v: unknown): unknown =>
  JSON.parse(JSON.stringify(v, (_k, x: unknown) => (x instanceof Uint8Array ? { bytes: hex(x) } : isBufferJson(x) ? { bytes: hex(Buffer.from(x.data)) } : x)));

function isBufferJson(x: unknown): x is { type: 'Buffer'; data: number[] } {
  return typeof x === 'object' && x !== null && (x as { type?: unknown }).type === 'Buffer' && Array.isArray((x as { data?: unknown }).data);
}

const entries = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'commandEntries.json'), 'utf8')) as Fixture[];
const byName = new Map(entries.map((f) => [f.name, f]));

describe('log entry bytes, as written before the command registry', () => {
  it('encodes every sample command to the same bytes', () => {
    for (const [name, command] of COMMAND_SAMPLES) expect(hex(encodeCommand(command)), name).toBe(byName.get(name)?.hex);
  });

  it('decodes and applies every fixture entry as before, to the same snapshot', () => {
    const m = new LockStateMachine();
    let index = 0;
    const names = [...COMMAND_SAMPLES.map(([n]) => n), ...LEGACY_ENTRIES.map(([n]) => n)];
    expect(names.length).toBe(entries.length - 1);
    for (const name of names) {
      const f = byName.get(name);
      if (f === undefined) throw new Error(`no fixture ${name}`);
      const command = decodeCommand(Buffer.from(f.hex, 'hex'));
      index += 1;
      // A command that fails validation decodes as it was written; apply answers the problem.
      expect(plain(command), name).toEqual(f.decoded);
      const applied = command.type === 'Undecodable' ? null : m.apply(index, command);
      const problem = command.type === 'Undecodable' ? null : validateCommand(command);
      if (problem !== null) expect(applied?.result, name).toEqual({ status: 'invalid', message: problem });
      expect(plain(applied), name).toEqual(f.applied);
    }
    // The fixture's snapshot was written in format 4 (before snapshot format 5): the state it holds, read
    // and written again today, is the state these entries give today.
    const before = LockStateMachine.readSnapshot(Buffer.from(byName.get('final snapshot')?.hex ?? '', 'hex'));
    expect(hex(m.writeSnapshot())).toBe(hex(before.writeSnapshot()));
  });
});
