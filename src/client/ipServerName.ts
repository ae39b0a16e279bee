// grpc-js sends the endpoint's host as the TLS server name (SNI) even when it is an IP address, and Node then
// warns once per process (DEP0123: "Setting the TLS ServerName to an IP address is not permitted by RFC
// 6066") in every application that dials 127.0.0.1. SNI is for host names only: these credentials leave it
// out for an IP address. Verification is unchanged: without a server name Node checks the certificate
// against the host dialled, the same IP address.
import * as grpc from '@grpc/grpc-js';
import { isIP } from 'node:net';

type SecureConnector = ReturnType<grpc.ChannelCredentials['_createSecureConnector']>;

/** What grpc-js keeps for tls.connect in its connector (not part of its typed API: checked before use). */
interface WithConnectionOptions {
  connectionOptions?: { servername?: unknown };
}

class NoIpServerName extends grpc.ChannelCredentials {
  constructor(private readonly inner: grpc.ChannelCredentials) {
    super();
  }

  override compose(callCredentials: grpc.CallCredentials): grpc.ChannelCredentials {
    return new NoIpServerName(this.inner.compose(callCredentials));
  }

  _isSecure(): boolean {
    return this.inner._isSecure();
  }

  _equals(other: grpc.ChannelCredentials): boolean {
    return other instanceof NoIpServerName && this.inner._equals(other.inner);
  }

  _createSecureConnector(...args: Parameters<grpc.ChannelCredentials['_createSecureConnector']>): SecureConnector {
    const connector = this.inner._createSecureConnector(...args);
    const options = (connector as WithConnectionOptions).connectionOptions;
    if (options && typeof options.servername === 'string' && isIP(options.servername) !== 0) delete options.servername;
    return connector;
  }
}

/** TLS credentials that send no server name for an endpoint given as an IP address. */
export function withoutIpServerName(credentials: grpc.ChannelCredentials): grpc.ChannelCredentials {
  return credentials._isSecure() ? new NoIpServerName(credentials) : credentials;
}
