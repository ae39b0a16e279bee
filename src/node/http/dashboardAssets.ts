// The web dashboard's static files (docs/dashboard.md): plain HTML, CSS and JavaScript from
// src/node/http/dashboard/ (copied beside this module into dist/ by scripts/copy-dashboard.cjs), read once
// when the listener starts and served from memory at `GET /` and `/dashboard/...`. The files hold no data:
// the page fetches everything from the gateway's JSON routes with the user's own credentials, so serving
// them needs no identity. The Content-Security-Policy allows this origin's script, style and fetches only.
import { existsSync, readFileSync } from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';

/** No inline script or style, nothing from elsewhere, no framing, no form posts. */
export const DASHBOARD_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/dashboard/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/dashboard/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/dashboard/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};

/**
 * Beside the compiled module (`npm run build` copies the files there); in a checkout built with a bare
 * `tsc`, the sources the compiled module came from (dist/src/node/http -> src/node/http).
 */
function assetDir(): string {
  const beside = path.join(__dirname, 'dashboard');
  const source = path.resolve(__dirname, '../../../../src/node/http/dashboard');
  return existsSync(beside) || !existsSync(source) ? beside : source;
}

interface Asset {
  body: Buffer;
  type: string;
}

export class DashboardAssets {
  private constructor(private readonly assets: Map<string, Asset>) {}

  /** Reads every file; throws naming the folders when one is missing from both. */
  static load(dir = assetDir()): DashboardAssets {
    const assets = new Map<string, Asset>();
    for (const [route, { file, type }] of Object.entries(FILES)) {
      try {
        assets.set(route, { body: readFileSync(path.join(dir, file)), type });
      } catch (err) {
        throw new Error(`httpListen: the dashboard's ${file} is missing from ${dir} (npm run build copies it): ${(err as Error).message}`);
      }
    }
    return new DashboardAssets(assets);
  }

  /** Whether `pathname` is one of the dashboard's; the gateway answers every other path. */
  serves(pathname: string): boolean {
    return this.assets.has(pathname);
  }

  /** Answers a request for one of the files: GET and HEAD only, 405 with Allow otherwise. */
  answer(req: http.IncomingMessage, res: http.ServerResponse, pathname: string): void {
    const asset = this.assets.get(pathname);
    if (!asset) throw new Error(`dashboard: no file for ${pathname}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`${pathname} takes GET, HEAD\n`);
      return;
    }
    res.writeHead(200, {
      'Content-Type': asset.type,
      'Content-Length': asset.body.length,
      'Content-Security-Policy': DASHBOARD_CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : asset.body);
  }
}
