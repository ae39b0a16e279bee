import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  authTokenProblem,
  buildCredentials,
  chooseCredentials,
  ENV_CACERT,
  ENV_CERT,
  ENV_INSECURE,
  ENV_KEY,
  FenceLockError,
  type ClientTlsOptions,
  type CredentialSource,
} from '../client';
import { UsageError } from './exitCodes';

/** The global TLS flags. */
export interface SecurityFlags {
  cacert?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
}

/** What the CLI hands the client library, and what a `lock -- CMD` child needs to connect the same way. */
export interface ClientSecurity {
  /** Exactly one of tls / insecure: the CLI always decides, so the library never reads process.env itself. */
  tls?: ClientTlsOptions;
  insecure?: true;
  source: CredentialSource;
  /** FENCELOCK_CACERT/CERT/KEY/INSECURE for a child process (absolute paths; '' clears a variable). */
  childEnv: Record<string, string>;
  /** The CAs trusted and the flag, variable or file they came from, in words (for an untrusted certificate). */
  trust: string;
}

const FLAG_NAMES = { ca: '--cacert', cert: '--cert', key: '--key' };

/**
 * --cacert/--cert/--key/--insecure, else FENCELOCK_CACERT/CERT/KEY/INSECURE from `env`, else ./data/certs under
 * `cwd`, else the system roots (see src/client/credentials.ts). The files are read and checked here (a
 * mistake is a usage error naming the flag or variable), and again by the client.
 */
export function resolveClientSecurity(flags: SecurityFlags, env: NodeJS.ProcessEnv, cwd: string = process.cwd()): ClientSecurity {
  const anyFile = flags.cacert !== undefined || flags.cert !== undefined || flags.key !== undefined;
  if (flags.insecure === true && anyFile) throw new UsageError('--insecure contradicts --cacert/--cert/--key');
  if ((flags.cert === undefined) !== (flags.key === undefined)) throw new UsageError('--cert and --key go together: give both or neither');
  const abs = (p: string | Buffer | undefined): string | undefined => (typeof p === 'string' ? path.resolve(cwd, p) : undefined);
  const tlsFromFlags: ClientTlsOptions | undefined = anyFile ? { ca: abs(flags.cacert), cert: abs(flags.cert), key: abs(flags.key) } : undefined;
  let choice;
  let trust: string;
  try {
    choice = chooseCredentials({ tls: tlsFromFlags, insecure: flags.insecure === true ? true : undefined }, env, cwd, FLAG_NAMES);
    // Read and check the files now, so a mistake names the flag or variable it came from.
    trust = buildCredentials(choice).trust;
  } catch (err) {
    if (err instanceof FenceLockError) throw new UsageError(err.message);
    throw err;
  }
  if (choice.insecure) {
    return { insecure: true, source: choice.source, childEnv: { [ENV_INSECURE]: '1', [ENV_CACERT]: '', [ENV_CERT]: '', [ENV_KEY]: '' }, trust };
  }
  const ca = abs(choice.tls.ca);
  const cert = abs(choice.tls.cert);
  const key = abs(choice.tls.key);
  const tls: ClientTlsOptions = { ca, cert, key };
  return {
    tls,
    source: choice.source,
    childEnv: { [ENV_INSECURE]: '', [ENV_CACERT]: ca ?? '', [ENV_CERT]: cert ?? '', [ENV_KEY]: key ?? '' },
    trust,
  };
}

/** The bearer token's variable. Not FENCELOCK_TOKEN: that one is the fencing token (`lock -- CMD` sets it). */
export const ENV_AUTH_TOKEN = 'FENCELOCK_AUTH_TOKEN';

/** The global bearer-token flags. */
export interface AuthTokenFlags {
  authToken?: string;
  authTokenFile?: string;
}

/**
 * The bearer token every call carries: --auth-token-file (its content, surrounding whitespace trimmed), else
 * --auth-token (visible in ps, like any argument), else FENCELOCK_AUTH_TOKEN (unset or empty: none). Its
 * shape is checked here (flt_<16 hex digits>_<secret>, no whitespace inside); a mistake is a usage error
 * that names where the token came from and never repeats it.
 */
export function resolveAuthToken(
  flags: AuthTokenFlags,
  env: NodeJS.ProcessEnv,
  readFile: (file: string) => string = (f) => fs.readFileSync(f, 'utf8'),
): string | undefined {
  if (flags.authToken !== undefined && flags.authTokenFile !== undefined) throw new UsageError('give --auth-token or --auth-token-file, not both');
  let token: string;
  let source: string;
  if (flags.authTokenFile !== undefined) {
    try {
      token = readFile(flags.authTokenFile).trim();
    } catch (err) {
      throw new UsageError(`--auth-token-file: cannot read ${flags.authTokenFile}: ${(err as Error).message}`);
    }
    source = `--auth-token-file ${flags.authTokenFile}:`;
    if (token === '') throw new UsageError(`--auth-token-file: ${flags.authTokenFile} is empty`);
  } else if (flags.authToken !== undefined) {
    token = flags.authToken;
    source = '--auth-token:';
  } else {
    const fromEnv = env[ENV_AUTH_TOKEN];
    if (fromEnv === undefined || fromEnv === '') return undefined;
    token = fromEnv;
    source = `${ENV_AUTH_TOKEN}:`;
  }
  const problem = authTokenProblem(token);
  if (problem !== undefined) throw new UsageError(`${source} the token ${problem}`);
  return token;
}
