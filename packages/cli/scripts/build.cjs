// Builds the CLI package (run by `npm pack` as prepack): compiles all of src (the server too: `fencelock
// serve`) into dist, copies the .proto files where src/codec/protoPath.ts and src/client/protoPath.ts look for
// them (a proto/ folder above the compiled files), and installs the runtime dependencies into this folder's
// node_modules, which the tarball bundles (bundleDependencies): `npm install -g ./fencelock-cli-X.tgz` then
// needs no registry.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const pkg = path.resolve(__dirname, '..');
const repo = path.resolve(pkg, '..', '..');

fs.rmSync(path.join(pkg, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(pkg, 'tsconfig.json')], { stdio: 'inherit' });
fs.chmodSync(path.join(pkg, 'dist', 'cli', 'main.js'), 0o755);

fs.rmSync(path.join(pkg, 'proto'), { recursive: true, force: true });
fs.cpSync(path.join(repo, 'proto'), path.join(pkg, 'proto'), { recursive: true, filter: (src) => fs.statSync(src).isDirectory() || src.endsWith('.proto') });

// The versions the repository was tested with come from its npm cache when present (the checkout's npm ci).
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
execFileSync(npm, ['install', '--omit=dev', '--no-package-lock', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: pkg, stdio: ['ignore', 'ignore', 'inherit'] });
process.stderr.write('@fencelock/cli built: dist, proto, bundled runtime dependencies\n');
