// grpc-js passes the target host as the TLS server name, and Node warns (DEP0123) once per process when
// that host is an IP address such as 127.0.0.1. The name is still verified against the certificate's IP
// SANs; the warning only says SNI will not carry it. Shown to every CLI user and in every node's log, it is
// noise, so this one warning is dropped and every other warning printed as Node would.
const SNI_IP_WARNING = 'DEP0123';

export function quietSniIpWarning(): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning: Error & { code?: string }) => {
    if (warning.code === SNI_IP_WARNING) return;
    process.stderr.write(`(node:${process.pid}) ${warning.code ? `[${warning.code}] ` : ''}${warning.name}: ${warning.message}\n`);
  });
}
