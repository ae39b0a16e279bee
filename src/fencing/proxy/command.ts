// The proxy's command line, shared by `fencelock proxy` (src/cli) and the `fencelock-proxy` bin of the
// @fencelock/fencing package: the flags, their parsing and the run until SIGINT/SIGTERM. It imports nothing
// of the CLI, so that the package ships without it.
import { type Command, Option } from 'commander';
import type { LockDescriber } from './claimCheck';
import { PROXY_LIMIT_OPTIONS, proxyLimits, UNCHECKED_CLAIMS_WARNING, type ProxyLimitFlags } from './options';
import { FencingProxy, type ResourceRule } from './proxy';

/** The cluster the proxy asks which tokens each lock issued; closed when the proxy stops. */
export interface ProxyCluster extends LockDescriber {
  close(): Promise<void>;
}

/** Connects to the cluster with the command's (global) flags; the CLI and the package's bin each know how. */
export type ConnectCluster = (cmd: Command) => ProxyCluster;

/** Where the command writes and which signals stop it (the process, or a stand-in in tests). */
export interface ProxyCommandIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  signals: NodeJS.EventEmitter;
}

/** Runs an action and records its exit code (each caller reports errors its own way). */
export type ProxyAction = <A extends unknown[]>(fn: (...args: A) => Promise<number>) => (...args: A) => Promise<void>;

/** A mistake in the proxy's flags: reported as a message, exit code 1. */
export class ProxyUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

interface ProxyFlags extends ProxyLimitFlags {
  listen: string;
  target: string;
  state: string;
  resourceHeader?: string;
  resourceSegments?: string;
  passMethods: string;
  upstreamTimeout: string;
}

function nonNegativeInt(text: string, what: string, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^(0|[1-9][0-9]*)$/.test(text)) throw new ProxyUsageError(`${what}: ${JSON.stringify(text)} is not a non-negative integer`);
  const n = Number(text);
  if (n > max) throw new ProxyUsageError(`${what}: ${text} is above the maximum ${max}`);
  return n;
}

function positiveInt(text: string, what: string): number {
  const n = nonNegativeInt(text, what);
  if (n === 0) throw new ProxyUsageError(`${what}: must be at least 1`);
  return n;
}

function parseListen(text: string): { host: string; port: number } {
  const i = text.lastIndexOf(':');
  if (i <= 0) throw new ProxyUsageError(`--listen: ${JSON.stringify(text)} is not host:port`);
  return { host: text.slice(0, i).replace(/^\[|\]$/g, ''), port: nonNegativeInt(text.slice(i + 1), '--listen port', 65_535) };
}

function resourceRule(f: ProxyFlags, caseInsensitive: boolean): ResourceRule {
  if (f.resourceHeader !== undefined && f.resourceSegments !== undefined) throw new ProxyUsageError('give --resource-header or --resource-segments, not both');
  if (f.resourceHeader !== undefined) {
    if (caseInsensitive) throw new ProxyUsageError('--case-insensitive-paths is for path resources, not --resource-header');
    if (!/^[A-Za-z0-9-]+$/.test(f.resourceHeader)) throw new ProxyUsageError(`--resource-header: ${JSON.stringify(f.resourceHeader)} is not a header name`);
    return { header: f.resourceHeader };
  }
  return { segments: f.resourceSegments === undefined ? 1 : nonNegativeInt(f.resourceSegments, '--resource-segments', 64), caseInsensitive };
}

export const PROXY_DESCRIPTION = 'a fencing reverse proxy: checks Fencing-Token/Fencing-Lock per resource before a request reaches a service that cannot';

function helpText(name: string): string {
  return `
Only canonical request targets are forwarded (no "//", dot segments, needless percent-encoding): others get 400.
Writes (every other method) need Fencing-Token and Fencing-Lock (optional Fencing-Step); the token must be one
the cluster (--endpoints, --cacert, ...) issued to that lock, else 409 WRONG_LOCK. Per resource they
are taken one at a time; a token below the resource's watermark (or the same token without a higher step)
gets 409 and never reaches the service; otherwise the new watermark is fsynced, then the request is forwarded.
It protects the service only if it is the ONLY way to it, and it is one process: run it next to the service.
A crash after the fsync and before the answer leaves the outcome unknown: retry with a higher Fencing-Step.
See docs/fencing-downstream.md.
Example: ${name} --listen 127.0.0.1:8080 --target http://127.0.0.1:9000 --state /var/lib/fencing/proxy.log`;
}

/**
 * Gives `cmd` the proxy's flags, help and action. `name` is how the user typed it (`fencelock proxy`,
 * `fencelock-proxy`), for the help's example; `--json` is read from the command or its parents.
 */
export function defineProxyCommand(cmd: Command, io: ProxyCommandIO, action: ProxyAction, name: string, connect: ConnectCluster): Command {
  cmd
    .description(PROXY_DESCRIPTION)
    .requiredOption('--target <url>', 'the service, e.g. http://127.0.0.1:9000')
    .requiredOption('--state <file>', 'the watermark log (fsynced; created when missing)')
    .addOption(new Option('--listen <host:port>', 'where to listen (port 0: any free port)').default('127.0.0.1:7300'))
    .option('--resource-segments <n>', 'resource = the first N path segments (default 1: /accounts/7 -> /accounts)')
    .option('--resource-header <name>', 'resource = the value of this request header')
    .addOption(new Option('--pass-methods <list>', 'methods forwarded without a check (they must change nothing)').default('GET,HEAD,OPTIONS'))
    .addOption(new Option('--upstream-timeout <ms>', 'answer 504 and give the next request its turn after this long').default('30000'));
  for (const o of PROXY_LIMIT_OPTIONS) cmd.addOption(o.default === undefined ? new Option(o.flags, o.description) : new Option(o.flags, o.description).default(o.default));
  return cmd
    .addHelpText('after', helpText(name))
    .action(action(async (f: ProxyFlags, c: Command) => runProxy(f, (c.optsWithGlobals() as { json?: boolean }).json === true, io, () => connect(c), name)));
}

async function runProxy(f: ProxyFlags, json: boolean, io: ProxyCommandIO, connect: () => ProxyCluster, name: string): Promise<number> {
  const { host, port } = parseListen(f.listen);
  const passMethods = f.passMethods.split(',').map((m) => m.trim().toUpperCase()).filter((m) => m !== '');
  const upstreamTimeoutMs = positiveInt(f.upstreamTimeout, '--upstream-timeout');
  let proxy: FencingProxy;
  let cluster: ProxyCluster | undefined;
  try {
    const limits = proxyLimits(f);
    cluster = limits.uncheckedClaims ? undefined : connect();
    const claims = cluster ?? 'unchecked';
    proxy = await FencingProxy.start(
      { target: f.target, stateFile: f.state, resource: resourceRule(f, limits.caseInsensitivePaths), passMethods, upstreamTimeoutMs, claims, maxResources: limits.maxResources, maxBodyBytes: limits.maxBodyBytes },
      host,
      port,
    );
  } catch (err) {
    await cluster?.close();
    if (err instanceof RangeError || (err as Error).message.includes('Invalid URL')) throw new ProxyUsageError((err as Error).message);
    throw err;
  }
  if (cluster === undefined) io.stderr(`${name}: ${UNCHECKED_CLAIMS_WARNING}\n`);
  const a = proxy.address();
  const where = `${a.address}:${a.port}`;
  if (proxy.log.droppedTail) io.stderr('fencelock proxy: dropped a torn last record of the watermark log (a request that was never forwarded)\n');
  io.stdout(
    json
      ? `${JSON.stringify({ listening: where, target: f.target, state: f.state, resources: proxy.log.size, claims: cluster ? 'checked' : 'unchecked' })}\n`
      : `fencelock proxy listening on ${where}, forwarding to ${f.target}; watermarks of ${proxy.log.size} resources in ${f.state}\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      for (const sig of ['SIGINT', 'SIGTERM']) io.signals.off(sig, stop);
      resolve();
    };
    for (const sig of ['SIGINT', 'SIGTERM']) io.signals.on(sig, stop);
  });
  await proxy.close();
  await cluster?.close();
  return 0;
}
