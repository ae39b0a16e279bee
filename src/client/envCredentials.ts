// Interim: channel credentials from FENCELOCK_CACERT / FENCELOCK_CERT / FENCELOCK_KEY (plaintext with
// FENCELOCK_INSECURE=1). The client's TLS options replace this.
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';

export function envCredentials(): grpc.ChannelCredentials {
  if (process.env.FENCELOCK_INSECURE === '1') return grpc.credentials.createInsecure();
  const read = (v: string | undefined): Buffer | null => (v ? readFileSync(v) : null);
  return grpc.credentials.createSsl(read(process.env.FENCELOCK_CACERT), read(process.env.FENCELOCK_KEY), read(process.env.FENCELOCK_CERT));
}
