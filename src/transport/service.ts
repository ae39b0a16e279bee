// The RaftPeer gRPC service, defined by hand over raw bytes.
//
// proto/fencelock/v1/raft.proto declares `rpc Stream(stream MessageBatch) returns (stream PeerAck)`.
// The payload on the wire is exactly an encoded MessageBatch (made by src/codec/raftCodec), so tools
// that read the proto (grpcurl, reflection) describe it correctly, but the hot path does no
// proto-loader object conversion: the transport encodes once and hands gRPC the bytes.
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';

export const RAFT_PEER_SERVICE_NAME = 'fencelock.v1.RaftPeer';
export const RAFT_PEER_STREAM_PATH = `/${RAFT_PEER_SERVICE_NAME}/Stream`;

/** Bytes to Buffer without a copy. */
export function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function identity(buf: Buffer): Buffer {
  return buf;
}

export const RAFT_PEER_STREAM_METHOD: MethodDefinition<Uint8Array, Uint8Array> = {
  path: RAFT_PEER_STREAM_PATH,
  requestStream: true,
  responseStream: true,
  originalName: 'stream',
  requestSerialize: toBuffer,
  requestDeserialize: identity,
  responseSerialize: toBuffer,
  responseDeserialize: identity,
};

export const RAFT_PEER_SERVICE: ServiceDefinition = {
  Stream: RAFT_PEER_STREAM_METHOD,
};
