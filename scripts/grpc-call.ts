// A grpcurl-shaped caller for the public API, for the README's gRPC examples: grpcurl is not packaged for
// Debian 12, so the examples run this instead (test/docs/readmeGrpc.test.ts runs them as written).
//
//   node dist/scripts/grpc-call.js [-cacert F] [-cert F -key F] [-plaintext] ADDRESS list
//   node dist/scripts/grpc-call.js [...] [-d JSON] ADDRESS fencelock.v1.SERVICE/METHOD
//
// Unary methods only. The request is JSON with the .proto's field names (enums by name, bytes in base64,
// 64-bit integers as numbers or strings); the answer is printed the same way. A failed call prints its
// status code, message and fencelock-* metadata on stderr and exits 1; bad arguments exit 2.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { readFileSync } from 'node:fs';
import { protoFile } from '../src/codec/protoPath';
import { quietSniIpWarning } from '../src/node/processWarnings';

const USAGE = 'usage: grpc-call [-cacert FILE] [-cert FILE -key FILE] [-plaintext] [-d JSON] ADDRESS (list | fencelock.v1.SERVICE/METHOD)';
const OPTIONS_WITH_VALUE = new Set(['-cacert', '-cert', '-key', '-d']);

interface Args {
  options: Map<string, string>;
  plaintext: boolean;
  address: string;
  target: string;
}

function parseArgs(argv: string[]): Args | string {
  const options = new Map<string, string>();
  const rest: string[] = [];
  let plaintext = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-plaintext') plaintext = true;
    else if (OPTIONS_WITH_VALUE.has(a)) {
      if (argv[i + 1] === undefined) return `${a} needs a value`;
      options.set(a, argv[++i]!);
    } else if (a.startsWith('-')) return `unknown option ${a}`;
    else rest.push(a);
  }
  if (rest.length !== 2) return 'give ADDRESS and then list or SERVICE/METHOD';
  if (options.has('-cert') !== options.has('-key')) return '-cert and -key go together';
  return { options, plaintext, address: rest[0]!, target: rest[1]! };
}

function credentials(args: Args): grpc.ChannelCredentials {
  if (args.plaintext) return grpc.credentials.createInsecure();
  const file = (k: string): Buffer | null => (args.options.has(k) ? readFileSync(args.options.get(k)!) : null);
  return grpc.credentials.createSsl(file('-cacert'), file('-key'), file('-cert'));
}

type Definitions = Record<string, protoLoader.ServiceDefinition>;

/** Every service of lock.proto by full name (fencelock.v1.Lock), each with its methods. */
function services(): Definitions {
  const def = protoLoader.loadSync(protoFile('fencelock/v1/lock.proto'), { keepCase: true, longs: String, enums: String, bytes: String, oneofs: true });
  return Object.fromEntries(Object.entries(def).filter(([, v]) => !('format' in v) && !('type' in v))) as Definitions;
}

function call(client: grpc.Client, method: protoLoader.MethodDefinition<object, object>, request: object): Promise<object> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, request, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (err, res) =>
      err ? reject(err) : resolve(res!),
    );
  });
}

function describeError(err: grpc.ServiceError): string {
  const meta = Object.entries(err.metadata?.getMap() ?? {}).filter(([k]) => k.startsWith('fencelock-'));
  return [`ERROR: ${grpc.status[err.code]}: ${err.details}`, ...meta.map(([k, v]) => `  ${k}: ${String(v)}`)].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    console.error(`grpc-call: ${args}\n${USAGE}`);
    return 2;
  }
  const defs = services();
  if (args.target === 'list') {
    console.log(Object.keys(defs).sort().join('\n'));
    return 0;
  }
  const [service = '', name = ''] = args.target.split('/');
  const method = defs[service]?.[name];
  if (!method) {
    console.error(`grpc-call: no method ${args.target}; the services are: ${Object.keys(defs).sort().join(', ')}`);
    return 2;
  }
  if (method.requestStream || method.responseStream) {
    console.error(`grpc-call: ${args.target} is a streaming method; only unary calls are supported`);
    return 2;
  }
  const client = new grpc.Client(args.address, credentials(args));
  try {
    const res = await call(client, method as protoLoader.MethodDefinition<object, object>, JSON.parse(args.options.get('-d') ?? '{}') as object);
    console.log(JSON.stringify(res, null, 2));
    return 0;
  } catch (err) {
    if (err instanceof SyntaxError) throw new Error(`-d is not JSON: ${err.message}`);
    console.error(describeError(err as grpc.ServiceError));
    return 1;
  } finally {
    client.close();
  }
}

if (require.main === module) {
  quietSniIpWarning();
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: Error) => {
      console.error(`grpc-call: ${err.message}`);
      process.exit(1);
    },
  );
}
