// The node's CA, certificate and key, read from files and reread on demand (SIGHUP), fed to grpc-js's
// certificate-provider credentials so that new connections use new certificates without a restart.
import type { experimental } from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';

type Provider = experimental.CertificateProvider;
type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

export interface TlsFiles {
  ca: string;
  cert: string;
  key: string;
}

interface Loaded {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

function load(files: TlsFiles): Loaded {
  const read = (what: string, file: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`cannot read TLS ${what} ${file}: ${(err as Error).message}`);
    }
  };
  return { ca: read('CA', files.ca), cert: read('certificate', files.cert), key: read('key', files.key) };
}

export class CertificateFiles implements Provider {
  private current: Loaded;
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();

  constructor(readonly files: TlsFiles) {
    this.current = load(files);
  }

  /** The PEM material as loaded now (the TLS framing carrier reads it for every new connection). */
  pem(): Loaded {
    return this.current;
  }

  /** Rereads the files. On error the previous certificates stay in use and the error is thrown. */
  reload(): void {
    this.current = load(this.files);
    for (const l of this.caListeners) l({ caCertificate: this.current.ca });
    for (const l of this.identityListeners) l({ certificate: this.current.cert, privateKey: this.current.key });
  }

  // New listeners hear the current files on the next microtask, not synchronously: grpc-js's server
  // credentials register their own watcher only after adding the listener, and would miss a synchronous
  // first update (the listener would then refuse every connection as "credentials not loaded").
  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    queueMicrotask(() => this.caListeners.has(listener) && listener({ caCertificate: this.current.ca }));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    queueMicrotask(() => this.identityListeners.has(listener) && listener({ certificate: this.current.cert, privateKey: this.current.key }));
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
  }
}
