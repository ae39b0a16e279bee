import * as fs from 'fs';
import * as path from 'path';

/**
 * Locating the .proto files at run time.
 *
 * The same module runs from `src/codec` (vitest, ts-node) and from `dist/src/codec` (compiled), and tsc does
 * not copy .proto files, so a fixed relative path cannot work for both. Instead we walk up from this file's
 * directory until a `proto/` folder is found. The result is cached.
 */

let cachedRoot: string | undefined;

/** The project's `proto/` directory (absolute). Throws a clear error when none is found. */
export function protoRoot(): string {
  if (cachedRoot !== undefined) return cachedRoot;
  const searched: string[] = [];
  let dir = __dirname;
  for (;;) {
    const candidate = path.join(dir, 'proto');
    searched.push(candidate);
    if (isDirectory(candidate)) {
      cachedRoot = candidate;
      return candidate;
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error(`cannot find the proto/ directory; searched: ${searched.join(', ')}`);
}

/**
 * Absolute path of a .proto file given relative to the `proto/` directory, e.g.
 * `protoFile('fencelock/v1/raft.proto')`. Throws a clear error when the file does not exist.
 */
export function protoFile(name: string): string {
  const file = path.join(protoRoot(), name);
  if (!fs.existsSync(file)) {
    throw new Error(`proto file ${name} not found (looked for ${file})`);
  }
  return file;
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
