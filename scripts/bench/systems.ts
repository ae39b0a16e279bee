// The systems of the side-by-side benchmark: fencelock and etcd, each with TLS (the default of both, named
// plainly) and/or plaintext (named <system>-plain), so that every row can show what TLS costs each system.

export const BASE_SYSTEMS = ['fencelock', 'etcd'] as const;
export type BaseSystem = (typeof BASE_SYSTEMS)[number];

export const TLS_MODES = ['on', 'off', 'both'] as const;
export type TlsMode = (typeof TLS_MODES)[number];

export interface SystemVariant {
  /** "fencelock", "etcd" (TLS) or "fencelock-plain", "etcd-plain". */
  name: string;
  base: BaseSystem;
  tls: boolean;
}

export function variantName(base: BaseSystem, tls: boolean): string {
  return tls ? base : `${base}-plain`;
}

/** TLS variants first, then plaintext ones, each in the order of `bases`. */
export function systemVariants(bases: readonly BaseSystem[], mode: TlsMode): SystemVariant[] {
  const modes = mode === 'both' ? [true, false] : [mode === 'on'];
  return modes.flatMap((tls) => bases.map((base) => ({ name: variantName(base, tls), base, tls })));
}
