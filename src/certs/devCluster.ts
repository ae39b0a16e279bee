// The shipped local clusters (cluster/*.json) read their certificates from data/certs, made on first start.
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { generateDevCerts } from './generate';

/** Node ids the shipped 3- and 5-node configs use: one set of certificates serves both. */
export const DEV_NODE_IDS = ['n1', 'n2', 'n3', 'n4', 'n5'];

/** Makes `<root>/data/certs` unless its CA exists already; returns the folder. */
export async function ensureDevCerts(root: string): Promise<string> {
  const dir = path.join(root, 'data', 'certs');
  if (!existsSync(path.join(dir, 'ca.pem'))) await generateDevCerts(dir, { nodes: DEV_NODE_IDS });
  return dir;
}
