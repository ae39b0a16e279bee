// The systems of the side-by-side benchmark: fencelock and etcd, each with TLS (the default of both, named
// plainly) and/or plaintext (named <system>-plain), so that every row can show what TLS costs each system;
// fencelock with auth on (named fencelock-auth: every worker its own user with a bearer token, over TLS),
// so that every row can show what auth costs fencelock; and ZooKeeper, in plaintext only (its client here,
// node-zookeeper-client, has no TLS), named plainly and measured once whatever --tls says.

export const BASE_SYSTEMS = ['fencelock', 'etcd', 'zookeeper'] as const;
export type BaseSystem = (typeof BASE_SYSTEMS)[number];

/** Systems measured in plaintext only, under their plain name. */
const PLAINTEXT_ONLY: readonly BaseSystem[] = ['zookeeper'];

/** The systems fencelock is compared with. */
export const PEER_SYSTEMS: readonly BaseSystem[] = ['etcd', 'zookeeper'];

export const TLS_MODES = ['on', 'off', 'both'] as const;
export type TlsMode = (typeof TLS_MODES)[number];

/** on: fencelock with auth only; off: without; both: fencelock both ways (etcd is always measured without). */
export const AUTH_MODES = ['on', 'off', 'both'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

export interface SystemVariant {
  /** "fencelock", "etcd" (TLS), "fencelock-auth" (TLS and auth), "fencelock-plain", "etcd-plain" or "zookeeper" (plaintext). */
  name: string;
  base: BaseSystem;
  tls: boolean;
  /** Auth on (fencelock only, and only with TLS: the admin is named by the bench's client certificate). */
  auth: boolean;
}

export function variantName(base: BaseSystem, tls: boolean, auth = false): string {
  if (PLAINTEXT_ONLY.includes(base)) return base;
  return auth ? `${base}-auth` : tls ? base : `${base}-plain`;
}

/** Whether `base` runs both with TLS and in plaintext (so has a TLS cost). */
export function hasTlsVariant(base: BaseSystem): boolean {
  return !PLAINTEXT_ONLY.includes(base);
}

/** The peers a fencelock variant with or without TLS is compared with: etcd the same way, and zookeeper. */
export function peerSystems(tls: boolean): string[] {
  return PEER_SYSTEMS.map((base) => variantName(base, tls));
}

/**
 * TLS variants first, then plaintext ones, each in the order of `bases`; fencelock with auth right after
 * fencelock without. Auth only goes with TLS: plaintext variants are always without it. A plaintext-only
 * system comes once, in the first group, whatever the mode.
 */
export function systemVariants(bases: readonly BaseSystem[], mode: TlsMode, authMode: AuthMode = 'off'): SystemVariant[] {
  const modes = mode === 'both' ? [true, false] : [mode === 'on'];
  return modes.flatMap((tls, group) =>
    bases.flatMap((base): SystemVariant[] => {
      if (PLAINTEXT_ONLY.includes(base)) return group === 0 ? [{ name: base, base, tls: false, auth: false }] : [];
      const auths = base === 'fencelock' && tls ? (authMode === 'both' ? [false, true] : [authMode === 'on']) : [false];
      return auths.map((auth) => ({ name: variantName(base, tls, auth), base, tls, auth }));
    }),
  );
}
