// Global setup of the vitest 'browser' project: the dashboard's tests drive Debian's Chromium headless through
// puppeteer-core, which brings no browser of its own; scripts/ensure-chromium.sh installs the `chromium` package
// when missing. Fails loudly, never skips.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

export default function setup(): void {
  try {
    execFileSync('bash', [path.resolve(__dirname, '../../scripts/ensure-chromium.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    throw new Error(`the browser tests need Chromium: scripts/ensure-chromium.sh failed (${(err as Error).message.split('\n')[0]})`);
  }
}
