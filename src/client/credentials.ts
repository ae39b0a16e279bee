import * as grpc from '@grpc/grpc-js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { FenceLockError } from './errors';
import { withoutIpServerName } from './ipServerName';

/**
 * TLS material of a client (docs/security.md, "Files"). Each of ca, cert and key is PEM text (a string that
 * contains "-----BEGIN", or a Buffer) or the path of a PEM file.
 */
export interface ClientTlsOptions {
  /** CA certificate(s) the servers' certificates must chain to; default: the system's root CAs. */
  ca?: string | Buffer;
  /** Client certificate chain, presented to the server (needs key). */
  cert?: string | Buffer;
  /** Private key of cert. */
  key?: string | Buffer;
  /**
   * Name to verify the server certificate against (and to send as SNI) instead of each endpoint's host.
   * Only for endpoints reached by a name the certificates do not carry; verification itself stays on.
   */
  serverName?: string;
}

/** The part of FenceLockClientOptions that picks the credentials. */
export interface CredentialOptions {
  tls?: ClientTlsOptions;
  /** Plaintext, no TLS at all: only for a cluster started with "insecure": true. */
  insecure?: boolean;
}

/** Where the credentials came from, in the order they are looked for. */
export type CredentialSource = 'options' | 'env' | 'local-cluster' | 'system-roots' | 'insecure-option' | 'insecure-env';

export interface ResolvedCredentials {
  credentials: grpc.ChannelCredentials;
  /** Extra channel options (grpc.ssl_target_name_override when serverName was given). */
  channelOptions: grpc.ChannelOptions;
  insecure: boolean;
  source: CredentialSource;
  /** True when a client certificate is presented. */
  clientCert: boolean;
  /** The files read, when the material came from files (for passing on to a child process, say). */
  files: { ca?: string; cert?: string; key?: string };
  /** The CAs the servers' certificates must chain to, in words (for an untrusted-certificate error). */
  trust: string;
}

export const ENV_CACERT = 'FENCELOCK_CACERT';
export const ENV_CERT = 'FENCELOCK_CERT';
export const ENV_KEY = 'FENCELOCK_KEY';
export const ENV_INSECURE = 'FENCELOCK_INSECURE';

/** The local cluster's certificates (npm run cluster), relative to the current directory. */
export const LOCAL_CERTS_DIR = path.join('data', 'certs');

/** FENCELOCK_INSECURE: 1/true for plaintext, 0/false/empty/unset for TLS; anything else is a mistake. */
export function parseInsecureEnv(value: string | undefined): boolean {
  if (value === undefined) return false;
  const v = value.trim().toLowerCase();
  if (v === '1' || v === 'true') return true;
  if (v === '' || v === '0' || v === 'false') return false;
  throw new FenceLockError('INVALID_ARGUMENT', `${ENV_INSECURE}: ${JSON.stringify(value)} is not 1, true, 0 or false`);
}

interface Material {
  pem: Buffer;
  file?: string;
}

function material(value: string | Buffer, what: string): Material {
  if (Buffer.isBuffer(value)) return { pem: value };
  if (typeof value !== 'string' || value === '') throw new FenceLockError('INVALID_ARGUMENT', `${what}: expected PEM text, a Buffer or a file path`);
  if (value.includes('-----BEGIN')) return { pem: Buffer.from(value, 'utf8') };
  const file = path.resolve(value);
  try {
    return { pem: fs.readFileSync(file), file };
  } catch (err) {
    throw new FenceLockError('INVALID_ARGUMENT', `${what}: cannot read ${file}: ${(err as Error).message}`);
  }
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every certificate of a PEM bundle, parsed; at least one. */
function certificates(pem: Buffer, what: string): X509Certificate[] {
  const blocks = pem.toString('utf8').match(PEM_CERT) ?? [];
  if (blocks.length === 0) throw new FenceLockError('INVALID_ARGUMENT', `${what}: no PEM certificate in it`);
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b);
    } catch (err) {
      throw new FenceLockError('INVALID_ARGUMENT', `${what}: certificate ${i + 1} cannot be parsed (${(err as Error).message})`);
    }
  });
}

function build(opts: ClientTlsOptions, source: CredentialSource, names: MaterialNames): ResolvedCredentials {
  if ((opts.cert === undefined) !== (opts.key === undefined)) {
    throw new FenceLockError('INVALID_ARGUMENT', `${names.cert} and ${names.key} go together: give both or neither`);
  }
  const ca = opts.ca !== undefined ? material(opts.ca, names.ca) : undefined;
  const cert = opts.cert !== undefined ? material(opts.cert, names.cert) : undefined;
  const key = opts.key !== undefined ? material(opts.key, names.key) : undefined;
  // grpc-js reads the PEM only when it connects (and Node ignores a CA it cannot parse): check it here, so a
  // bad file fails at once, by name.
  if (ca) certificates(ca.pem, names.ca);
  const leaf = cert ? certificates(cert.pem, names.cert)[0] : undefined;
  if (leaf && key) {
    let keyObject: KeyObject;
    try {
      keyObject = createPrivateKey(key.pem);
    } catch (err) {
      throw new FenceLockError('INVALID_ARGUMENT', `${names.key}: not a PEM private key (${(err as Error).message})`);
    }
    if (!leaf.checkPrivateKey(keyObject)) throw new FenceLockError('INVALID_ARGUMENT', `${names.key} is not the private key of ${names.cert}`);
  }
  let credentials: grpc.ChannelCredentials;
  try {
    credentials = withoutIpServerName(grpc.credentials.createSsl(ca?.pem ?? null, key?.pem ?? null, cert?.pem ?? null));
  } catch (err) {
    throw new FenceLockError('INVALID_ARGUMENT', `TLS credentials (${source}): ${(err as Error).message}`);
  }
  const channelOptions: grpc.ChannelOptions = {};
  if (opts.serverName !== undefined) {
    if (typeof opts.serverName !== 'string' || opts.serverName === '') throw new FenceLockError('INVALID_ARGUMENT', 'tls.serverName must be a non-empty string');
    channelOptions['grpc.ssl_target_name_override'] = opts.serverName;
  }
  return {
    credentials,
    channelOptions,
    insecure: false,
    source,
    clientCert: cert !== undefined,
    files: { ca: ca?.file, cert: cert?.file, key: key?.file },
    trust: describeTrust(source, names.ca, ca === undefined ? 'none' : (ca.file ?? 'pem')),
  };
}

/**
 * Which CAs a client trusts and where that came from: "the CA in /x/ca.pem (from FENCELOCK_CACERT)". `ca`: the
 * file read, 'pem' for PEM text, 'none' for the system's roots; `caName`: the option, flag or variable (or, for
 * the local cluster, the file) it came from.
 */
export function describeTrust(source: CredentialSource, caName: string, ca: string): string {
  if (source === 'local-cluster') return `the local cluster's CA in ${ca} (${LOCAL_CERTS_DIR}/ca.pem under the current directory)`;
  if (source === 'system-roots') return `the system's root CAs (no ${ENV_CACERT}, and no ${LOCAL_CERTS_DIR}/ca.pem under the current directory)`;
  if (ca === 'none') return `the system's root CAs (no ${caName} given)`;
  if (ca === 'pem') return `the CA given as PEM text in ${caName}`;
  return `the CA in ${ca} (from ${caName})`;
}

/** What to do about a server certificate that does not chain to the CA trusted, in words. */
export const UNTRUSTED_CA_FIX =
  `point the client at the cluster's CA: ${ENV_CACERT}=/path/to/ca.pem (for a cluster started by \`npm run cluster\`: ` +
  `data/certs/ca.pem in its checkout), or the CLI's --cacert FILE, or the library's tls: { ca: FILE }`;

function plaintext(source: CredentialSource): ResolvedCredentials {
  return { credentials: grpc.credentials.createInsecure(), channelOptions: {}, insecure: true, source, clientCert: false, files: {}, trust: 'nothing (plaintext)' };
}

/** What each piece of TLS material is called where it came from, for error messages. */
export interface MaterialNames {
  ca: string;
  cert: string;
  key: string;
}

export const OPTION_NAMES: MaterialNames = { ca: 'tls.ca', cert: 'tls.cert', key: 'tls.key' };
const ENV_NAMES: MaterialNames = { ca: ENV_CACERT, cert: ENV_CERT, key: ENV_KEY };

/** The decision, before any file is read: plaintext, or TLS with this material (file paths unless given as PEM). */
export type CredentialChoice =
  | { insecure: true; source: CredentialSource }
  | { insecure: false; source: CredentialSource; tls: ClientTlsOptions; names: MaterialNames };

/**
 * Picks the credentials of every channel of a client, first match wins:
 *  1. explicit options: `insecure: true` (plaintext), or `tls` (its ca, else the system roots; cert+key if given);
 *  2. the environment: FENCELOCK_INSECURE=1 (plaintext), or FENCELOCK_CACERT / FENCELOCK_CERT / FENCELOCK_KEY
 *     (file paths; a missing CA means the system roots);
 *  3. the local cluster's files under `cwd`: data/certs/ca.pem, plus client.pem and client-key.pem when both exist;
 *  4. TLS with the system's root CAs.
 * `insecure: false` given explicitly means TLS whatever FENCELOCK_INSECURE says. Contradictions (plaintext
 * together with TLS material at the same level) are refused rather than guessed.
 */
export function chooseCredentials(
  opts: CredentialOptions = {},
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
  optionNames: MaterialNames = OPTION_NAMES,
): CredentialChoice {
  if (opts.insecure === true) {
    if (opts.tls !== undefined) throw new FenceLockError('INVALID_ARGUMENT', 'insecure: true and tls options contradict each other');
    return { insecure: true, source: 'insecure-option' };
  }
  if (opts.tls !== undefined) return { insecure: false, source: 'options', tls: opts.tls, names: optionNames };

  const envPath = (name: string): string | undefined => (env[name] ? path.resolve(cwd, env[name]) : undefined);
  const fromEnv: ClientTlsOptions = { ca: envPath(ENV_CACERT), cert: envPath(ENV_CERT), key: envPath(ENV_KEY) };
  const anyEnvFile = fromEnv.ca !== undefined || fromEnv.cert !== undefined || fromEnv.key !== undefined;
  if (opts.insecure !== false && parseInsecureEnv(env[ENV_INSECURE])) {
    if (anyEnvFile) throw new FenceLockError('INVALID_ARGUMENT', `${ENV_INSECURE}=1 contradicts ${ENV_CACERT}/${ENV_CERT}/${ENV_KEY}; unset one or the other`);
    return { insecure: true, source: 'insecure-env' };
  }
  if (anyEnvFile) return { insecure: false, source: 'env', tls: fromEnv, names: ENV_NAMES };

  const dir = path.resolve(cwd, LOCAL_CERTS_DIR);
  const ca = path.join(dir, 'ca.pem');
  if (fs.existsSync(ca)) {
    const cert = path.join(dir, 'client.pem');
    const key = path.join(dir, 'client-key.pem');
    const withClient = fs.existsSync(cert) && fs.existsSync(key);
    return { insecure: false, source: 'local-cluster', tls: withClient ? { ca, cert, key } : { ca }, names: { ca, cert, key } };
  }
  return { insecure: false, source: 'system-roots', tls: {}, names: optionNames };
}

/** Builds the credentials of a choice: reads and checks its files, naming them as the choice does. */
export function buildCredentials(choice: CredentialChoice): ResolvedCredentials {
  return choice.insecure ? plaintext(choice.source) : build(choice.tls, choice.source, choice.names);
}

/** Builds the channel credentials chooseCredentials picks (reading the files it names). */
export function resolveCredentials(opts: CredentialOptions = {}, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): ResolvedCredentials {
  return buildCredentials(chooseCredentials(opts, env, cwd));
}
