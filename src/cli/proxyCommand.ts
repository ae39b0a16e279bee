// `fencelock proxy`: the fencing reverse proxy (src/fencing/proxy) in front of a service that cannot check
// tokens. This file only wires options to it and runs it until SIGINT/SIGTERM.
import { type Command, Option } from 'commander';
import type { FenceLockClient } from '../client';
import { FencingProxy, type ResourceRule } from '../fencing';
import { PROXY_LIMIT_OPTIONS, proxyLimits, UNCHECKED_CLAIMS_WARNING, type ProxyLimitFlags } from '../fencing/proxy/options';
import { EXIT, UsageError } from './exitCodes';
import { toJson, type CliIO } from './output';
import { parseNonNegativeInt, parsePositiveInt } from './parse';

type Action = <A extends unknown[]>(fn: (...args: A) => Promise<number>) => (...args: A) => Promise<void>;

interface ProxyFlags extends ProxyLimitFlags {
  listen: string;
  target: string;
  state: string;
  resourceHeader?: string;
  resourceSegments?: string;
  passMethods: string;
  upstreamTimeout: string;
}

function parseListen(text: string): { host: string; port: number } {
  const i = text.lastIndexOf(':');
  if (i <= 0) throw new UsageError(`--listen: ${JSON.stringify(text)} is not host:port`);
  return { host: text.slice(0, i).replace(/^\[|\]$/g, ''), port: parseNonNegativeInt(text.slice(i + 1), '--listen port', 65_535) };
}

function resourceRule(f: ProxyFlags, caseInsensitive: boolean): ResourceRule {
  if (f.resourceHeader !== undefined && f.resourceSegments !== undefined) throw new UsageError('give --resource-header or --resource-segments, not both');
  if (f.resourceHeader !== undefined) {
    if (caseInsensitive) throw new UsageError('--case-insensitive-paths is for path resources, not --resource-header');
    if (!/^[A-Za-z0-9-]+$/.test(f.resourceHeader)) throw new UsageError(`--resource-header: ${JSON.stringify(f.resourceHeader)} is not a header name`);
    return { header: f.resourceHeader };
  }
  return { segments: f.resourceSegments === undefined ? 1 : parseNonNegativeInt(f.resourceSegments, '--resource-segments', 64), caseInsensitive };
}

export function addProxyCommand(program: Command, io: CliIO, action: Action, connect: (cmd: Command) => FenceLockClient): void {
  const proxyCommand = program
    .command('proxy')
    .description('a fencing reverse proxy: checks Fencing-Token/Fencing-Lock per resource before a request reaches a service that cannot')
    .requiredOption('--target <url>', 'the service, e.g. http://127.0.0.1:9000')
    .requiredOption('--state <file>', 'the watermark log (fsynced; created when missing)')
    .addOption(new Option('--listen <host:port>', 'where to listen (port 0: any free port)').default('127.0.0.1:7300'))
    .option('--resource-segments <n>', 'resource = the first N path segments (default 1: /accounts/7 -> /accounts)')
    .option('--resource-header <name>', 'resource = the value of this request header')
    .addOption(new Option('--pass-methods <list>', 'methods forwarded without a check (they must change nothing)').default('GET,HEAD,OPTIONS'))
    .addOption(new Option('--upstream-timeout <ms>', 'answer 504 and give the next request its turn after this long').default('30000'));
  for (const o of PROXY_LIMIT_OPTIONS) proxyCommand.addOption(o.default === undefined ? new Option(o.flags, o.description) : new Option(o.flags, o.description).default(o.default));
  proxyCommand
    .addHelpText(
      'after',
      `
Only canonical request targets are forwarded (no "//", dot segments, needless percent-encoding): others get 400.
Writes (every other method) need Fencing-Token and Fencing-Lock (optional Fencing-Step); the token must be one
the cluster (--endpoints, --cacert, ...) issued to that lock, else 409 WRONG_LOCK. Per resource they
are taken one at a time; a token below the resource's watermark (or the same token without a higher step)
gets 409 and never reaches the service; otherwise the new watermark is fsynced, then the request is forwarded.
It protects the service only if it is the ONLY way to it, and it is one process: run it next to the service.
A crash after the fsync and before the answer leaves the outcome unknown: retry with a higher Fencing-Step.
See docs/fencing-downstream.md.
Example: fencelock proxy --listen 127.0.0.1:8080 --target http://127.0.0.1:9000 --state /var/lib/fencing/proxy.log`,
    )
    .action(
      action(async (f: ProxyFlags, cmd: Command) => {
        const { host, port } = parseListen(f.listen);
        const passMethods = f.passMethods.split(',').map((m) => m.trim().toUpperCase()).filter((m) => m !== '');
        const upstreamTimeoutMs = parsePositiveInt(f.upstreamTimeout, '--upstream-timeout');
        let proxy: FencingProxy;
        let cluster: FenceLockClient | undefined;
        try {
          const limits = proxyLimits(f);
          cluster = limits.uncheckedClaims ? undefined : connect(cmd);
          const claims = cluster ?? 'unchecked';
          proxy = await FencingProxy.start({ target: f.target, stateFile: f.state, resource: resourceRule(f, limits.caseInsensitivePaths), passMethods, upstreamTimeoutMs, claims, maxResources: limits.maxResources, maxBodyBytes: limits.maxBodyBytes }, host, port);
        } catch (err) {
          await cluster?.close();
          if (err instanceof RangeError || (err as Error).message.includes('Invalid URL')) throw new UsageError((err as Error).message);
          throw err;
        }
        if (cluster === undefined) io.stderr(`fencelock proxy: ${UNCHECKED_CLAIMS_WARNING}\n`);
        const a = proxy.address();
        const json = (cmd.optsWithGlobals() as { json?: boolean }).json === true;
        const where = `${a.address}:${a.port}`;
        if (proxy.log.droppedTail) io.stderr('fencelock proxy: dropped a torn last record of the watermark log (a request that was never forwarded)\n');
        io.stdout(
          json
            ? `${toJson({ listening: where, target: f.target, state: f.state, resources: proxy.log.size, claims: cluster ? 'checked' : 'unchecked' })}\n`
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
        return EXIT.OK;
      }),
    );
}
