import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The version in fencelock's package.json, found by walking up from this file: the same code runs from
 * src/cli (vitest), dist/src/cli (compiled) and the installed @fencelock/cli package (packages/cli), and tsc
 * does not copy package.json.
 */
export function packageVersion(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if ((pkg.name === 'fencelock' || pkg.name === '@fencelock/cli') && typeof pkg.version === 'string') return pkg.version;
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}
