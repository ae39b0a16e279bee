// gRPC credentials of the two listeners and of the peer links (see docs/security.md).
import * as grpc from '@grpc/grpc-js';
import type { PeerCertificate } from 'node:tls';
import { nodeIdOf } from '../../certs/identity';
import type { CertificateFiles } from './certificateFiles';

/** Client listener: the node's certificate; client certificates requested, and required when asked. */
export function clientServerCredentials(files: CertificateFiles | null, requireClientCert: boolean): grpc.ServerCredentials {
  if (!files) return grpc.ServerCredentials.createInsecure();
  return grpc.experimental.createCertificateProviderServerCredentials(files, files, requireClientCert);
}

/** Peer listener: mutual TLS, a certificate from the cluster CA required of every caller. */
export function peerServerCredentials(files: CertificateFiles | null): grpc.ServerCredentials {
  if (!files) return grpc.ServerCredentials.createInsecure();
  return grpc.experimental.createCertificateProviderServerCredentials(files, files, true);
}

/**
 * Credentials to dial one peer: our node certificate as the client certificate, and a check that the server
 * reached presents the identity of the node we meant to reach.
 */
export function peerChannelCredentials(files: CertificateFiles | null, peerId: string): grpc.ChannelCredentials {
  if (!files) return grpc.credentials.createInsecure();
  return grpc.experimental.createCertificateProviderChannelCredentials(files, files, {
    // grpc-js calls this after its own host name check has passed.
    checkServerIdentity: (host: string, cert: PeerCertificate) => {
      const named = nodeIdOf(cert);
      return named === peerId ? undefined : new Error(`peer at ${host} presented node identity "${named ?? 'none'}", expected "${peerId}"`);
    },
  });
}
