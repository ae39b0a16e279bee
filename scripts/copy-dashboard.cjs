#!/usr/bin/env node
// Copies the web dashboard's static files (src/node/http/dashboard/: HTML, CSS, JavaScript, which tsc does not
// emit) beside the compiled listener in dist/, where the node reads them (src/node/http/dashboardAssets.ts), so a
// built tree (the container image mounts dist/) carries them. Plain JavaScript: it runs right after tsc.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const FROM = path.join(ROOT, 'src', 'node', 'http', 'dashboard');
const TO = path.join(ROOT, 'dist', 'src', 'node', 'http', 'dashboard');

function copyDashboard() {
  fs.rmSync(TO, { recursive: true, force: true });
  fs.cpSync(FROM, TO, { recursive: true });
}

module.exports = { copyDashboard };
if (require.main === module) copyDashboard();
