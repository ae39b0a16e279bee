// The proxy's options for checking claims and bounding what it keeps, as plain data and parse functions so
// that every command that runs the proxy declares and reads them the same way (no CLI library here).
import { DEFAULT_MAX_RESOURCES } from './watermarkLog';

export const DEFAULT_MAX_BODY_BYTES = 1 << 20;

export interface ProxyLimitFlags {
  maxResources: string;
  maxBodyBytes: string;
  uncheckedClaims?: boolean;
  caseInsensitivePaths?: boolean;
}

export interface ProxyLimits {
  maxResources: number;
  maxBodyBytes: number;
  /** Claims are not checked against the cluster (see UNCHECKED_CLAIMS_WARNING). */
  uncheckedClaims: boolean;
  /** The service routes case-insensitively (Express's default): /A and /a are one resource. */
  caseInsensitivePaths: boolean;
}

/** The options to declare: flags, help text, default (undefined: a switch). */
export const PROXY_LIMIT_OPTIONS: { flags: string; description: string; default?: string }[] = [
  { flags: '--max-resources <n>', description: 'keep the watermarks of at most N resources; a write to a new resource beyond them gets 507', default: String(DEFAULT_MAX_RESOURCES) },
  { flags: '--max-body-bytes <n>', description: 'a write with a larger body gets 413 and is not forwarded', default: String(DEFAULT_MAX_BODY_BYTES) },
  { flags: '--case-insensitive-paths', description: 'the service routes paths case-insensitively (Express\'s default): /A/x and /a/x are one resource' },
  {
    flags: '--unchecked-claims',
    description: 'do not ask the cluster whether it issued a claim\'s token to its lock (for a proxy that cannot reach the cluster; anyone who reaches the proxy can then block a resource for good)',
  },
];

export const UNCHECKED_CLAIMS_WARNING =
  'WARNING: --unchecked-claims: claims are NOT checked against the fencelock cluster. Anyone who can reach this proxy can bind an unused resource to a made-up lock with token 2^63-1, and nobody can write that resource again. Use it only where every client is trusted (docs/fencing-downstream.md).';

function positive(text: string, what: string): number {
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text))) throw new RangeError(`${what}: ${JSON.stringify(text)} is not a positive integer`);
  return Number(text);
}

/** Throws RangeError with the option's name on a bad value. */
export function proxyLimits(f: ProxyLimitFlags): ProxyLimits {
  return { maxResources: positive(f.maxResources, '--max-resources'), maxBodyBytes: positive(f.maxBodyBytes, '--max-body-bytes'), uncheckedClaims: f.uncheckedClaims === true, caseInsensitivePaths: f.caseInsensitivePaths === true };
}
