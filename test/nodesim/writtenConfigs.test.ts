// The observer's index of configuration entries must answer what walking the written log back would.
import { describe, expect, it } from 'vitest';
import { encodeConfigEntry, fullConfig } from '../../src/raft/confChange';
import { EntryType, type Entry } from '../../src/raft/types';
import { MemoryStorage } from '../../src/storage/memoryStorage';
import { WrittenConfigs } from './writtenConfigs';

const conf = (index: number, term: number, voters: string[]): Entry => ({ index, term, type: EntryType.ConfChange, data: encodeConfigEntry(fullConfig({ voters })) });
const normal = (index: number, term: number): Entry => ({ index, term, type: EntryType.Normal, data: new Uint8Array([index]) });

function setUp(entries: Entry[]): { storage: MemoryStorage; configs: WrittenConfigs; write: (entries: Entry[]) => void } {
  const storage = new MemoryStorage();
  storage.write({ entries, hardState: { term: 2, vote: '', commit: 0 } });
  const configs = new WrittenConfigs(storage.view('written'));
  const write = (more: Entry[]): void => {
    storage.write({ entries: more });
    configs.written(more);
  };
  return { storage, configs, write };
}

describe('WrittenConfigs', () => {
  it('finds the last configuration entry at or below an index, from the log it was built on', () => {
    const { configs } = setUp([normal(1, 1), conf(2, 1, ['a']), normal(3, 1), conf(4, 1, ['a', 'b']), normal(5, 1)]);
    expect(configs.lastAtOrBelow(1)).toBeUndefined();
    expect(configs.lastAtOrBelow(3)?.index).toBe(2);
    expect(configs.lastAtOrBelow(5)?.index).toBe(4);
    expect(configs.lastAtOrBelow(99)?.index).toBe(4);
  });

  it('forgets configuration entries a later write replaced, including those after the batch', () => {
    const { configs, write } = setUp([normal(1, 1), conf(2, 1, ['a']), normal(3, 1), conf(4, 1, ['a', 'b']), normal(5, 1), conf(6, 1, ['b'])]);
    write([normal(4, 2)]);
    expect(configs.lastAtOrBelow(6)?.index).toBe(2);
    write([normal(5, 2), normal(6, 2), conf(7, 2, ['c'])]);
    expect(configs.lastAtOrBelow(6)?.index).toBe(2);
    expect(configs.lastAtOrBelow(7)?.index).toBe(7);
  });

  it('answers nothing for entries a snapshot covers', () => {
    const { storage, configs, write } = setUp([normal(1, 1), conf(2, 1, ['a']), normal(3, 1)]);
    storage.saveSnapshotSync({ meta: { index: 3, term: 1, config: { voters: ['a'], learners: [] } }, data: new Uint8Array() });
    expect(configs.lastAtOrBelow(3)).toBeUndefined();
    write([normal(4, 1), conf(5, 1, ['a', 'b'])]);
    expect(configs.lastAtOrBelow(4)).toBeUndefined();
    expect(configs.lastAtOrBelow(5)?.index).toBe(5);
  });
});
