// docs/configuration.md cannot drift from src/node/config.ts: every key has a row (or, while it is being
// added, a heading), every scalar default is the one the code fills in, and every row names a real key.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AUTH_FIELDS, CONFIG_DEFAULTS, KNOWN_FIELDS, MEMBER_FIELDS, TLS_FIELDS, TRACING_FIELDS } from '../../src/node/config';

const DOC = readFileSync(path.join(__dirname, '../../docs/configuration.md'), 'utf8');

/** Table rows by the key in their first cell: | `key` | type | default | meaning | -> cells. */
function rows(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of DOC.split('\n')) {
    const m = /^\| `([^`]+)` \|(.*)\|$/.exec(line);
    if (m) out.set(m[1]!, m[2]!.split('|').map((c) => c.trim()));
  }
  return out;
}

/** The default cell of a row, written as `JSON`. */
function defaultOf(cells: string[]): unknown {
  const m = /^`(.*)`$/.exec(cells[1]!);
  if (!m) throw new Error(`default cell ${cells[1]} is not \`JSON\``);
  return JSON.parse(m[1]!);
}

const headings = new Set([...DOC.matchAll(/^#+ `([^`]+)`$/gm)].map((m) => m[1]!));

/** Every key of a config file, nested ones with their path (a member's as members.ID.KEY). */
const ALL_KEYS = [
  ...KNOWN_FIELDS,
  ...MEMBER_FIELDS.map((k) => `members.ID.${k}`),
  ...TLS_FIELDS.map((k) => `tls.${k}`),
  ...AUTH_FIELDS.map((k) => `auth.${k}`),
  ...TRACING_FIELDS.map((k) => `tracing.${k}`),
];

describe('docs/configuration.md', () => {
  const table = rows();

  it('has a row (or a heading) for every key of the config', () => {
    const missing = ALL_KEYS.filter((k) => !table.has(k) && !headings.has(k));
    expect(missing, 'keys missing from docs/configuration.md').toEqual([]);
    expect(table.size).toBeGreaterThanOrEqual(KNOWN_FIELDS.size);
  });

  it('gives the default the code fills in', () => {
    for (const [key, value] of Object.entries(CONFIG_DEFAULTS)) {
      const cells = table.get(key);
      expect(cells, key).toBeDefined();
      expect(defaultOf(cells!), `default of ${key}`).toEqual(value);
    }
  });

  it('says that auth has no default: the section and its "enabled" are required', () => {
    expect('auth' in CONFIG_DEFAULTS).toBe(false);
    for (const key of ['auth', 'auth.enabled']) expect(table.get(key)?.[1], key).toBe('required');
  });

  it('documents no key the config does not have', () => {
    const known = new Set(ALL_KEYS);
    expect([...table.keys()].filter((k) => !known.has(k))).toEqual([]);
  });
});
