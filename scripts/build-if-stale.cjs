#!/usr/bin/env node
// Runs `tsc -p tsconfig.json` only when an input changed since the last build it made, so `npm run cluster
// -- status` and the other npm scripts start in well under a second when nothing changed (a full tsc takes
// 10-30 s on two busy cores). Plain JavaScript: it runs before anything is compiled.
//
// Inputs: every file under src/, test/, scripts/, proto/, plus tsconfig.json and package.json. The stamp
// dist/.build-stamp gets the time the last successful build started, so an edit during a build is seen.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { markBinExecutable } = require('./mark-bin-executable.cjs');
const { copyDashboard } = require('./copy-dashboard.cjs');

const ROOT = path.resolve(__dirname, '..');
const STAMP = path.join(ROOT, 'dist', '.build-stamp');
const INPUTS = ['src', 'test', 'scripts', 'proto', 'tsconfig.json', 'package.json'];

/** The newest modification time under `p` (a file or folder), in ms; 0 when it does not exist. */
function newest(p) {
  let st;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs; // a deleted or renamed file changes its folder's mtime
  for (const name of fs.readdirSync(p)) max = Math.max(max, newest(path.join(p, name)));
  return max;
}

function stampTime() {
  try {
    return fs.statSync(STAMP).mtimeMs;
  } catch {
    return -1;
  }
}

const inputs = Math.max(...INPUTS.map((p) => newest(path.join(ROOT, p))));
if (inputs <= stampTime()) process.exit(0);

const started = new Date();
console.error('build: sources changed since the last build, running tsc -p tsconfig.json ...');
const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
markBinExecutable();
copyDashboard();
fs.writeFileSync(STAMP, '');
fs.utimesSync(STAMP, started, started);
