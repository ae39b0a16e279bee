import * as fs from 'node:fs';
import * as path from 'node:path';

/** The folder (relative to the repository root) that holds the public API definition. */
const PROTO_DIR = path.join('proto', 'fencelock', 'v1');

/**
 * Finds the folder that contains `proto/fencelock/v1`, walking up from this file's folder, so the same code
 * works from src/client (vitest, ts-node), from dist/src/client (compiled) and from the installed package
 * (node_modules/@fencelock/client/dist/cjs/client, with lock.proto copied into the package's proto/).
 */
export function findProtoRoot(startDir: string = __dirname): string {
  let dir = path.resolve(startDir);
  for (;;) {
    if (fs.existsSync(path.join(dir, PROTO_DIR))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`cannot find ${PROTO_DIR} in ${startDir} or any folder above it`);
    }
    dir = parent;
  }
}

/** The absolute path of proto/fencelock/v1/lock.proto. */
export function lockProtoPath(startDir?: string): string {
  return path.join(findProtoRoot(startDir), PROTO_DIR, 'lock.proto');
}
