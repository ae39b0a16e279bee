// The systems of the side-by-side benchmark: fencelock and etcd, each with TLS (the default of both, named
// plainly) and/or plaintext (named <system>-plain), so that every row can show what TLS costs each system;
// and fencelock with auth on (named fencelock-auth: every worker its own user with a bearer token, over TLS),
// so that every row can show what auth costs fencelock.

export const BASE_SYSTEMS = ['fencelock', 'etcd'] as const;
export type BaseSystem = (typeof BASE_SYSTEMS)[number];

export const TLS_MODES = ['on', 'off', 'both'] as const;
export type TlsMode = (typeof TLS_MODES)[number];

/** on: fencelock with auth only; off: without; both: fencelock both ways (etcd is always measured without). */
export const AUTH_MODES = ['on', 'off', 'both'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

export interface SystemVariant {
  /** "fencelock", "etcd" (TLS), "fencelock-auth" (TLS and auth) or "fencelock-plain", "etcd-plain". */
  name: string;
  base: BaseSystem;
  tls: boolean;
  /** Auth on (fencelock only, and only with TLS: the admin is named by the bench's client certificate). */
  auth: boolean;
}

export function variantName(base: BaseSystem, tls: boolean, auth = false): string {
  return auth ? `${base}-auth` : tls ? base : `${base}-plain`;
}

/**
 * TLS variants first, then plaintext ones, each in the order of `bases`; fencelock with auth right after
 * fencelock without. Auth only goes with TLS: plaintext variants are always without it.
 */
export function systemVariants(bases: readonly BaseSystem[], mode: TlsMode, authMode: AuthMode = 'off'): SystemVariant[] {
  const modes = mode === 'both' ? [true, false] : [mode === 'on'];
  return modes.flatMap((tls) =>
    bases.flatMap((base) => {
      const auths = base === 'fencelock' && tls ? (authMode === 'both' ? [false, true] : [authMode === 'on']) : [false];
      return auths.map((auth) => ({ name: variantName(base, tls, auth), base, tls, auth }));
    }),
  );
}
