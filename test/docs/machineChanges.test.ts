// `npm test` changes the machine (it installs Debian packages through the scripts/ensure-*.sh scripts) and
// must say so: in one line before it starts (scripts/test.sh) and in the README's Testing section. The
// warning once forgot ZooKeeper after ensure-zookeeper.sh was added; this keeps the three in step.
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../integration/harness';

const SCRIPTS = path.join(PROJECT_ROOT, 'scripts');

/** The Debian packages the ensure scripts install: `apt_install WHAT PACKAGE` lines and ensure-docker's PKGS. */
function installedPackages(): string[] {
  const packages = new Set<string>();
  for (const name of readdirSync(SCRIPTS).filter((n) => /^ensure-.*\.sh$/.test(n))) {
    const text = readFileSync(path.join(SCRIPTS, name), 'utf8');
    for (const m of text.matchAll(/^\s*apt_install \S+ (\S+)\s*$/gm)) packages.add(m[1]!);
    for (const m of text.matchAll(/^\s*PKGS=\(([^)]*)\)/gm)) for (const pkg of m[1]!.trim().split(/\s+/)) packages.add(pkg);
  }
  return [...packages].sort();
}

function readmeTestingSection(): string {
  const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
  const m = /^## Testing\n([\s\S]*?)(?=^## )/m.exec(readme);
  if (!m) throw new Error('README.md has no "## Testing" section');
  return m[1]!;
}

describe('what npm test does to the machine is said', () => {
  it('finds the packages the ensure scripts install', () => {
    expect(installedPackages()).toEqual(expect.arrayContaining(['docker.io', 'etcd-server', 'mariadb-server', 'postgresql', 'python3-grpc-tools', 'python3-grpcio', 'redis-server', 'zookeeper']));
  });

  it('the warning scripts/test.sh prints before it starts names every one of them', () => {
    const warning = readFileSync(path.join(SCRIPTS, 'test.sh'), 'utf8')
      .split('\n')
      .find((line) => line.includes('changes the machine'));
    expect(warning, 'scripts/test.sh prints a "changes the machine" line').toBeDefined();
    for (const pkg of installedPackages()) expect(warning, `the warning names ${pkg}`).toContain(pkg);
  });

  it("the README's Testing section names every one of them", () => {
    const section = readmeTestingSection();
    for (const pkg of installedPackages()) expect(section, `README "## Testing" names ${pkg}`).toContain(`\`${pkg}\``);
  });
});
