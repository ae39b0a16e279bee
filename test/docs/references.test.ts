// Every Markdown file the code, scripts, tests and docs cite exists in the repository, with the #section
// named (docs/architecture.md#test-ladder): a comment that points at a note nobody can open is drift.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../integration/harness';

const SCANNED = ['src', 'scripts', 'test', 'docs', 'deploy', 'examples', 'cluster', '.ci', 'README.md', '.dependency-cruiser.cjs', 'eslint.config.mjs', 'vitest.config.ts', 'package.json'];
const TEXT = /\.(ts|js|cjs|mjs|sh|md|json|service|txt|yml|yaml)$|Dockerfile$|^\.ci\/run$/;
// A path ending in .md, optionally with #anchor; not `forge.md.sha256` (a property chain, not a file).
const REFERENCE = /([A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md)(#[A-Za-z0-9_-]+)?(?![\w.]*\w\()(?!\.\w)/g;
// deploy/systemd installs the repository under /opt/fencelock, so its Documentation= links are files of this tree.
const INSTALL_ROOT = /^\/+opt\/fencelock\//;

function files(entry: string): string[] {
  const full = path.join(PROJECT_ROOT, entry);
  if (!existsSync(full)) return [];
  if (statSync(full).isFile()) return TEXT.test(entry) ? [entry] : [];
  return readdirSync(full).flatMap((name) => (name === 'node_modules' ? [] : files(path.join(entry, name))));
}

// This file names broken references on purpose, to show they are caught.
const SELF = path.relative(PROJECT_ROOT, __filename);
function scanned(): string[] {
  return SCANNED.flatMap(files).filter((f) => f !== SELF);
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}

function anchors(mdFile: string): Set<string> {
  const text = readFileSync(mdFile, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} +(.+)$/gm)].map((m) => anchorOf(m[1]!)));
}

interface Reference {
  from: string;
  line: number;
  target: string;
  anchor?: string;
}

export function referencesIn(file: string): Reference[] {
  const lines = readFileSync(path.join(PROJECT_ROOT, file), 'utf8').split('\n');
  return lines.flatMap((text, i) =>
    [...text.matchAll(REFERENCE)].map((m) => ({ from: file, line: i + 1, target: m[1]!, anchor: m[2]?.slice(1) })),
  );
}

/** The file a reference means: relative to the citing file's folder, else to the repository root. */
function resolve(ref: Reference): string | undefined {
  const target = ref.target.replace(INSTALL_ROOT, '');
  const candidates = [path.resolve(PROJECT_ROOT, path.dirname(ref.from), target), path.resolve(PROJECT_ROOT, target)];
  return candidates.find((c) => c.startsWith(PROJECT_ROOT + path.sep) && existsSync(c) && statSync(c).isFile());
}

export function brokenReferences(refs: Reference[]): string[] {
  return refs.flatMap((ref) => {
    const where = `${ref.from}:${ref.line}: ${ref.target}${ref.anchor ? `#${ref.anchor}` : ''}`;
    const file = resolve(ref);
    if (!file) return [`${where}: no such file in the repository`];
    if (ref.anchor && !anchors(file).has(ref.anchor)) return [`${where}: ${path.relative(PROJECT_ROOT, file)} has no heading #${ref.anchor}`];
    return [];
  });
}

describe('references to Markdown files', () => {
  const refs = scanned().flatMap(referencesIn);

  it('finds the references the code makes (the scan itself works)', () => {
    const targets = new Set(refs.map((r) => `${r.target}${r.anchor ? `#${r.anchor}` : ''}`));
    expect(targets).toContain('docs/architecture.md#promises');
    expect(targets).toContain('docs/containers.md#engine');
    expect(targets).toContain('docs/security.md');
    expect(refs.some((r) => r.target.startsWith('forge.'))).toBe(false);
  });

  it('every cited file and #section exists in the repository', () => {
    expect(brokenReferences(refs)).toEqual([]);
  });

  it('reports a missing file, a missing section, and a file outside the repository', () => {
    const fake = (target: string, anchor?: string): Reference => ({ from: 'src/state/index.ts', line: 1, target, anchor });
    const broken = brokenReferences([
      fake('DESIGN.md'),
      fake('../../../shared/CONTAINERS.md'),
      fake('docs/architecture.md', 'no-such-section'),
      fake('docs/architecture.md', 'test-ladder'),
    ]);
    expect(broken).toEqual([
      'src/state/index.ts:1: DESIGN.md: no such file in the repository',
      'src/state/index.ts:1: ../../../shared/CONTAINERS.md: no such file in the repository',
      'src/state/index.ts:1: docs/architecture.md#no-such-section: docs/architecture.md has no heading #no-such-section',
    ]);
  });

  it('makes anchors as GitHub does', () => {
    expect(anchorOf('Sessions and expiry')).toBe('sessions-and-expiry');
    expect(anchorOf('The CLI (`fencelock`, `node dist/src/cli/main.js` after `npm run build`)')).toBe(
      'the-cli-fencelock-node-distsrcclimainjs-after-npm-run-build',
    );
  });
});
