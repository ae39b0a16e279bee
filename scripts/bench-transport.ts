// Peer transport throughput: two peer transports on loopback in one process, a -> b, small App-like
// messages (one entry of --payload bytes), over the carrier --carrier names: grpc (two GrpcPeerTransports,
// the default) or tls (the peer policy over the TLS framing carrier, as a node runs it; plaintext TCP here, as
// the gRPC side is, so the two rows compare framing and batching, not encryption). For each burst size (messages handed to send() per event-loop
// turn) prints delivered messages/s, batches/s and messages per batch. The sender keeps at most --window
// messages in flight (sent, not yet delivered), so the numbers are delivery rates, not drop rates.
//
//   npm run build && node dist/scripts/bench-transport.js [--carrier grpc|tls] [--seconds 3] [--payload 64] [--window 4096]
//
// Both ends share one event loop (encode and decode compete for one core), so read the figures as a lower
// bound of what one node can push to one peer.
import * as grpc from '@grpc/grpc-js';
import { makeMessage } from '../src/raft/messages';
import { EntryType, MessageType, type Message } from '../src/raft/types';
import { GrpcPeerTransport, PEER_SERVER_OPTIONS } from '../src/transport/grpcPeerTransport';
import { PeerPolicy } from '../src/transport/peerPolicy';
import { TlsCarrier } from '../src/transport/tlsCarrier';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} needs a positive number`);
  return v;
}

function appMsg(seq: number, payload: Uint8Array): Message {
  return makeMessage({
    type: MessageType.App, from: 'a', to: 'b', term: 5, logTerm: 5, index: seq, commit: seq,
    entries: [{ term: 5, index: seq + 1, type: EntryType.Normal, data: payload }],
  });
}

function carrierArg(): 'grpc' | 'tls' {
  const i = process.argv.indexOf('--carrier');
  if (i < 0) return 'grpc';
  const v = process.argv[i + 1];
  if (v !== 'grpc' && v !== 'tls') throw new Error('--carrier needs grpc or tls');
  return v;
}

async function listen(server: grpc.Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))));
}

/** The two ends, a sending to b, and what stops them. */
interface Pair {
  a: PeerPolicy;
  b: PeerPolicy;
  stop: () => Promise<void>;
}

async function grpcPair(window: number): Promise<Pair> {
  const serverA = new grpc.Server(PEER_SERVER_OPTIONS);
  const serverB = new grpc.Server(PEER_SERVER_OPTIONS);
  const [portA, portB] = await Promise.all([listen(serverA), listen(serverB)]);
  const peers = { a: `127.0.0.1:${portA}`, b: `127.0.0.1:${portB}` };
  const a = new GrpcPeerTransport({ selfId: 'a', peers, maxQueuedMessagesPerPeer: window * 2 });
  const b = new GrpcPeerTransport({ selfId: 'b', peers });
  a.register(serverA);
  b.register(serverB);
  const stop = async (): Promise<void> => {
    await Promise.all([a.close(), b.close()]);
    serverA.forceShutdown();
    serverB.forceShutdown();
  };
  return { a, b, stop };
}

async function tlsPair(window: number): Promise<Pair> {
  const carrierA = new TlsCarrier({ credentials: null });
  const carrierB = new TlsCarrier({ credentials: null });
  const [portA, portB] = await Promise.all([carrierA.bind('127.0.0.1:0'), carrierB.bind('127.0.0.1:0')]);
  const peers = { a: `127.0.0.1:${portA}`, b: `127.0.0.1:${portB}` };
  const a = new PeerPolicy({ selfId: 'a', peers, maxQueuedMessagesPerPeer: window * 2 }, carrierA);
  const b = new PeerPolicy({ selfId: 'b', peers }, carrierB);
  const stop = async (): Promise<void> => {
    await Promise.all([a.close(), b.close()]);
    await Promise.all([carrierA.close(), carrierB.close()]);
  };
  return { a, b, stop };
}

async function main(): Promise<void> {
  const seconds = arg('seconds', 3);
  const payloadBytes = arg('payload', 64);
  const window = arg('window', 4096);
  const payload = new Uint8Array(payloadBytes).fill(7);

  const carrier = carrierArg();
  const { a, b, stop } = carrier === 'tls' ? await tlsPair(window) : await grpcPair(window);

  let received = 0;
  let batches = 0;
  b.onMessages((msgs) => {
    received += msgs.length;
    batches++;
  });

  // Warm up: connect and let V8 optimise the codec.
  let seq = 0;
  a.send([appMsg(seq++, payload)]);
  while (received < 1) await new Promise((r) => setTimeout(r, 5));

  process.stdout.write(`peer transport bench (${carrier} carrier): ${seconds}s per row, App messages with a ${payloadBytes}-byte entry, window ${window}\n`);
  process.stdout.write('msgs/turn   messages/s    batches/s   msgs/batch   dropped\n');
  for (const burst of [1, 16, 256, 2048]) {
    const r0 = received;
    const b0 = batches;
    const d0 = a.stats().b!.dropped;
    const t0 = process.hrtime.bigint();
    const end = Date.now() + seconds * 1000;
    let sent = received;
    await new Promise<void>((resolve) => {
      const turn = (): void => {
        if (Date.now() >= end) return resolve();
        if (sent - received + burst <= window) {
          const msgs = new Array<Message>(burst);
          for (let i = 0; i < burst; i++) msgs[i] = appMsg(seq++, payload);
          a.send(msgs);
          sent += burst;
        }
        setImmediate(turn);
      };
      turn();
    });
    // Let what is in flight arrive, so that messages and batches belong to this row.
    const drainEnd = Date.now() + 2000;
    while (received < sent && Date.now() < drainEnd) await new Promise((r) => setTimeout(r, 1));
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    const m = received - r0;
    const bt = batches - b0;
    process.stdout.write(
      `${String(burst).padStart(9)} ${Math.round(m / secs).toLocaleString('en-US').padStart(12)} ` +
      `${Math.round(bt / secs).toLocaleString('en-US').padStart(12)} ${(m / Math.max(bt, 1)).toFixed(1).padStart(12)} ` +
      `${String(a.stats().b!.dropped - d0).padStart(9)}\n`);
  }

  await stop();
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
