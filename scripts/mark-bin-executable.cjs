#!/usr/bin/env node
// Makes the package's bin files executable after tsc, which writes new files without the x bit. npm sets it
// when it installs a package, but not for the checkout itself: `npx fencelock` from a clone whose npx cache
// already links this folder runs dist/src/cli/main.js as it is, and gets "Permission denied" without this.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');

function markBinExecutable() {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  for (const bin of Object.values(pkg.bin ?? {})) {
    const file = path.join(ROOT, bin);
    if (fs.existsSync(file)) fs.chmodSync(file, fs.statSync(file).mode | 0o111);
  }
}

module.exports = { markBinExecutable };
if (require.main === module) markBinExecutable();
