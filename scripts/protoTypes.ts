// Generates the TypeScript types of the public API (proto/fencelock/v1/lock.proto) into src/protocol/generated
// with proto-loader-gen-types, using the options the client and server load the .proto with (camelCase,
// 64-bit integers as strings, enums as names, defaults, oneofs). `npm run gen:proto` writes them;
// test/protocol/generated.test.ts regenerates into a temporary folder and fails when the committed copy is stale.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { findProtoRoot } from '../src/client/protoPath';

export const GENERATED_DIR = path.join('src', 'protocol', 'generated');

/** Runs proto-loader-gen-types for lock.proto into outDir (absolute, or relative to the repository root). */
export function generateProtoTypes(root: string, outDir: string): void {
  const bin = path.join(root, 'node_modules', '.bin', 'proto-loader-gen-types');
  const args = ['--longs=String', '--enums=String', '--defaults', '--oneofs', '--includeComments', '--grpcLib=@grpc/grpc-js', '-I', 'proto', '-O', outDir, 'fencelock/v1/lock.proto'];
  execFileSync(bin, args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
}

if (require.main === module) {
  generateProtoTypes(findProtoRoot(), GENERATED_DIR);
  console.log(`wrote ${GENERATED_DIR}`);
}
