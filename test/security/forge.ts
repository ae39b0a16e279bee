// Forged Raft peer traffic for the security tests: messages a hostile party would send, real encoded
// commands in their entries (so that, were they stepped, they would apply), and a raw peer stream of either
// carrier (framedPeer.ts for the TLS frames, RaftPeer for gRPC) opened with whatever credentials and cluster
// id the attacker holds.
import * as grpc from '@grpc/grpc-js';
import * as protobuf from 'protobufjs';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { withoutIpServerName } from '../../src/client/ipServerName';
import { encodeCommand } from '../../src/codec/commandCodec';
import { encodeMessageBatch, raftProtoRoot } from '../../src/codec/raftCodec';
import { LockApp } from '../../src/node/lockApp';
import { makeMessage, type WireFields } from '../../src/raft/messages';
import { EntryType, MessageType, type Entry, type Message, type NodeId } from '../../src/raft/types';
import type { Command } from '../../src/state/commands';
import type { PeerCarrierName } from '../../src/node/config';
import { REMOVED_METADATA } from '../../src/transport/removalNotice';
import { RAFT_PEER_STREAM_PATH, toBuffer } from '../../src/transport/service';
import { openFramedPeerStream } from './framedPeer';

/** The highest term the codec carries: 2^53 - 1. */
export const MAX_TERM = Number.MAX_SAFE_INTEGER;

const MessageBatchType = raftProtoRoot.lookupType('fencelock.v1.MessageBatch');
/** A stand-in term the codec accepts, swapped for the real one after encoding. */
const PLACEHOLDER_TERM = 1;

/**
 * Encodes a batch as an attacker would: without the codec's checks. Our codec refuses numbers at or above
 * 2^48 even when encoding, so a message whose term is that high is encoded with a stand-in term, decoded as
 * a plain protobuf object and encoded again with the real term (a uint64 on the wire).
 */
export function encodeUnchecked(messages: readonly Message[]): Uint8Array {
  const terms = messages.map((m) => m.term);
  const bytes = encodeMessageBatch(messages.map((m) => (Number.isSafeInteger(m.term) && m.term < 2 ** 48 ? m : { ...m, term: PLACEHOLDER_TERM })));
  const batch = MessageBatchType.decode(bytes) as unknown as { messages: Array<{ term: unknown }> };
  batch.messages.forEach((m, i) => {
    m.term = protobufLong(terms[i]!);
  });
  return MessageBatchType.encode(batch as unknown as protobuf.Message).finish();
}

function protobufLong(value: number): protobuf.Long {
  return (protobuf.util.Long as unknown as { fromString(text: string, unsigned: boolean): protobuf.Long }).fromString(String(value), true);
}

/** A message with every field defaulted; `over` sets what the attack needs. */
export function msg(over: WireFields): Message {
  return makeMessage(over);
}

/** What a forgery tries to plant: a session of our choosing, a lock it holds and a key written under it. */
export interface Plant {
  sessionId: string;
  lock: string;
  key: string;
  value: string;
}

export function newPlant(tag: string): Plant {
  const lock = `forged-${tag}-${randomBytes(3).toString('hex')}`;
  return { sessionId: randomBytes(16).toString('hex'), lock, key: `${lock}/k`, value: `forged by ${tag}` };
}

/** OpenSession + Acquire + Write of the plant, as the commands a leader would have proposed. */
export function plantCommands(p: Plant): Command[] {
  const now = Date.now();
  const clientId = `attacker-${p.sessionId.slice(0, 6)}`;
  return [
    { type: 'OpenSession', clientId, requestId: 1, now, sessionId: p.sessionId, ttlMs: 300_000, clientName: 'attacker' },
    { type: 'Acquire', clientId, requestId: 2, now, lock: p.lock, sessionId: p.sessionId, tryOnly: true },
    // The token of a free lock is the Acquire entry's index: set by plantEntries.
    { type: 'Write', clientId, requestId: 3, now, lock: p.lock, sessionId: p.sessionId, token: 0, ops: [{ type: 'put', key: p.key, value: Buffer.from(p.value) }] },
  ];
}

/** The plant's commands as log entries starting at `firstIndex`, all of `term`. */
export function plantEntries(p: Plant, firstIndex: number, term: number): Entry[] {
  return plantCommands(p).map((c, i) => {
    const cmd = c.type === 'Write' ? { ...c, token: firstIndex + 1 } : c;
    return { term, index: firstIndex + i, type: EntryType.Normal, data: encodeCommand(cmd) };
  });
}

/** A well-formed state-machine snapshot that holds the plant (what a forged InstallSnapshot would install). */
export function plantSnapshot(p: Plant, firstIndex: number): Uint8Array {
  const app = new LockApp();
  plantEntries(p, firstIndex, 1).forEach((e) => app.apply(e.index, e.data));
  return app.snapshot();
}

/** Who the attacker claims to be on the wire. */
export interface PeerCredentials {
  /** PEM of the CA the attacker trusts (to finish the handshake with the node). */
  ca: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** Human name for assertion messages. */
  label: string;
}

/** Reads `<dir>/<name>.pem` and `<dir>/<name>-key.pem` (client: client.pem, client-key.pem). */
export function credentialsFrom(certsDir: string, name: string | null, label = name ?? 'no certificate'): PeerCredentials {
  const ca = readFileSync(path.join(certsDir, 'ca.pem'));
  if (name === null) return { ca, label };
  return { ca, cert: readFileSync(path.join(certsDir, `${name}.pem`)), key: readFileSync(path.join(certsDir, `${name}-key.pem`)), label };
}

/** TLS channel credentials from PEM buffers (a client certificate only when both halves are given). */
export function sslCredentials(ca: Buffer, key?: Buffer, cert?: Buffer): grpc.ChannelCredentials {
  return withoutIpServerName(grpc.credentials.createSsl(ca, key ?? null, cert ?? null));
}

/** The peer carriers an attack is tried on (src/node/config.ts `peerCarrier`). */
export const PEER_CARRIERS = ['tls', 'grpc'] as const satisfies readonly PeerCarrierName[];

/**
 * How a forged stream ended, whatever the carrier: `closed` without any answer (a refused handshake, or a
 * connection the node dropped), a refusal of the policy (`denied`, `malformed`, `unavailable`, `removed`),
 * `ended` in order after admission, or `unimplemented` (gRPC: no RaftPeer service there).
 */
export type PeerOutcome = 'closed' | 'denied' | 'malformed' | 'unavailable' | 'removed' | 'ended' | 'unimplemented';

export interface PeerStreamResult {
  /** The node admitted the stream (gRPC: response headers; frames: ACCEPT). */
  admitted: boolean;
  outcome: PeerOutcome;
  details: string;
}

/** A raw peer stream that carries bytes as MessageBatch frames (for malformed input too). */
export interface PeerByteStream {
  /** Sends raw bytes as one MessageBatch frame. */
  sendBytes(bytes: Uint8Array): void;
  /** Resolves when the node admitted the stream (true) or the stream ended first (false). */
  admitted: Promise<boolean>;
  /** Ends the stream in order and waits for the node's end (drops the connection after `timeoutMs`). */
  finish(timeoutMs?: number): Promise<PeerStreamResult>;
  /** The outcome, however the stream ends. */
  result: Promise<PeerStreamResult>;
}

export interface RawPeerStream extends PeerByteStream {
  send(messages: Message[]): void;
}

/** What the gRPC carrier's status says, as the outcome the frames' carrier would give. */
function grpcOutcome(s: grpc.StatusObject): PeerOutcome {
  if (s.code === grpc.status.FAILED_PRECONDITION && s.metadata.get(REMOVED_METADATA).length > 0) return 'removed';
  const byCode: Partial<Record<grpc.status, PeerOutcome>> = {
    [grpc.status.OK]: 'ended',
    [grpc.status.PERMISSION_DENIED]: 'denied',
    [grpc.status.INVALID_ARGUMENT]: 'malformed',
    [grpc.status.UNIMPLEMENTED]: 'unimplemented',
  };
  // UNAVAILABLE is both a refused handshake and the policy's "unavailable": to an attacker, no answer.
  return byCode[s.code] ?? 'closed';
}

/**
 * Opens fencelock.v1.RaftPeer/Stream at `address` as an attacker would: TLS with the given credentials (or
 * plaintext when `creds` is null), the given cluster id metadata (none when undefined).
 */
export function openGrpcPeerStream(address: string, creds: PeerCredentials | null, clusterId: string | undefined, channelOptions: grpc.ChannelOptions = {}): PeerByteStream {
  const channel = creds ? sslCredentials(creds.ca, creds.key, creds.cert) : grpc.credentials.createInsecure();
  const client = new grpc.Client(address, channel, { 'grpc.initial_reconnect_backoff_ms': 100, ...channelOptions });
  const md = new grpc.Metadata();
  if (clusterId !== undefined) md.set('fencelock-cluster-id', clusterId);
  const call = client.makeBidiStreamRequest<Uint8Array, Buffer>(RAFT_PEER_STREAM_PATH, toBuffer, (b) => b, md, { deadline: Date.now() + 20_000 });
  let gotHeaders = false;
  let markAdmitted: (v: boolean) => void = () => {};
  const admitted = new Promise<boolean>((resolve) => (markAdmitted = resolve));
  call.on('metadata', () => {
    gotHeaders = true;
    markAdmitted(true);
  });
  call.on('data', () => {});
  call.on('error', () => {});
  const result = new Promise<PeerStreamResult>((resolve) => {
    call.on('status', (s: grpc.StatusObject) => {
      markAdmitted(gotHeaders);
      client.close();
      resolve({ admitted: gotHeaders, outcome: grpcOutcome(s), details: `${grpc.status[s.code]} ${s.details}` });
    });
  });
  return {
    sendBytes: (bytes) => {
      try {
        call.write(bytes);
      } catch {
        /* the stream already failed: result says why */
      }
    },
    admitted,
    result,
    async finish(timeoutMs = 5_000) {
      try {
        call.end();
      } catch {
        /* already over */
      }
      const timer = setTimeout(() => call.cancel(), timeoutMs);
      const r = await result;
      clearTimeout(timer);
      return r;
    },
  };
}

export interface PeerStreamOptions {
  /** The node id a framed HELLO claims (gRPC streams claim none). */
  claimedId?: string;
  channelOptions?: grpc.ChannelOptions;
  /** Frames: ALPN protocols to offer (h2 reaches a gRPC listener's HTTP/2 parser). */
  alpn?: string[];
}

/** A raw peer stream of `carrier` to `address`, with the attacker's credentials and cluster id. */
export function openPeerStream(carrier: PeerCarrierName, address: string, creds: PeerCredentials | null, clusterId: string | undefined, opts: PeerStreamOptions = {}): RawPeerStream {
  const bytes = carrier === 'tls'
    ? openFramedPeerStream(address, creds, { clusterId, nodeId: opts.claimedId ?? '' }, { alpn: opts.alpn })
    : openGrpcPeerStream(address, creds, clusterId, opts.channelOptions);
  return { ...bytes, send: (messages) => bytes.sendBytes(encodeUnchecked(messages)) };
}

/**
 * Opens a stream and writes the batches at once (`gapMs` apart), as an attacker would, without waiting for
 * the node's verdict; then ends it and returns the outcome (and whether the node admitted it).
 */
export async function sendForged(
  carrier: PeerCarrierName,
  address: string,
  creds: PeerCredentials | null,
  clusterId: string | undefined,
  batches: Message[][],
  opts: PeerStreamOptions & { gapMs?: number } = {},
): Promise<PeerStreamResult> {
  const stream = openPeerStream(carrier, address, creds, clusterId, opts);
  for (const [i, b] of batches.entries()) {
    stream.send(b);
    if (opts.gapMs && i < batches.length - 1) await new Promise((r) => setTimeout(r, opts.gapMs));
  }
  // Give the node a moment to read (and act on, or drop) what was sent before the end.
  await Promise.race([stream.result, new Promise((r) => setTimeout(r, 500))]);
  return stream.finish();
}

/** Sends the same message to `to` under each of several `from`s: helpers for forging. */
export function addressedTo(to: NodeId, messages: Message[]): Message[] {
  return messages.map((m) => ({ ...m, to }));
}

export { MessageType };
