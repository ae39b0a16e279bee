// Stub: the real implementation comes from the server-side branch. Drop this file at merge.
export interface DevCertsOptions { nodes: string[]; client?: string; hosts?: string[]; days?: number }
/** Writes ca.pem, ca-key.pem, <node>.pem, <node>-key.pem, client.pem, client-key.pem into dir (0700, keys 0600). */
export async function generateDevCerts(dir: string, opts: DevCertsOptions): Promise<void> {
  void dir;
  void opts;
  throw new Error('not yet');
}
