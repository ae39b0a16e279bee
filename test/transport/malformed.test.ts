import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeMessageBatch } from '../../src/codec/raftCodec';
import { PEER_CHANNEL_OPTIONS, RAFT_PEER_STREAM_PATH } from '../../src/transport';
import { TestNode, appMsg, waitFor } from './helpers';

const started: TestNode[] = [];
const clients: grpc.Client[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(started.splice(0).map((n) => n.stop()));
});

function rawStream(addr: string): { call: grpc.ClientDuplexStream<Buffer, Buffer>; status: Promise<grpc.StatusObject> } {
  const client = new grpc.Client(addr, grpc.credentials.createInsecure(), PEER_CHANNEL_OPTIONS);
  clients.push(client);
  const call = client.makeBidiStreamRequest<Buffer, Buffer>(RAFT_PEER_STREAM_PATH, (b) => b, (b) => b, new grpc.Metadata());
  call.on('error', () => {});
  call.on('data', () => {});
  const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
  return { call, status };
}

describe('GrpcPeerTransport inbound', () => {
  it('a malformed batch ends that stream with INVALID_ARGUMENT; the receiver keeps serving', async () => {
    const b = new TestNode('b');
    started.push(b);
    const port = await b.listen();
    b.start({});
    const addr = `127.0.0.1:${port}`;

    // A valid batch first, then garbage on the same stream.
    const { call, status } = rawStream(addr);
    call.write(Buffer.from(encodeMessageBatch([appMsg('x', 'b', 1)])));
    call.write(Buffer.from([0x0a, 0xff, 0xff])); // field 1, length-delimited, truncated length
    call.write(Buffer.from(encodeMessageBatch([appMsg('x', 'b', 2)]))); // after the error: not delivered
    const st = await status;
    expect(st.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(st.details).toMatch(/malformed MessageBatch/);
    expect(b.received.map((m) => m.index)).toEqual([1]);
    expect(b.logger.lines.some((l) => l.level === 'warn' && l.msg.includes('malformed'))).toBe(true);

    // Other garbage: a known field with the wrong wire type, an unknown enum value.
    for (const junk of [Buffer.from([0x0f, 0x01]), Buffer.from([0x0a, 0x02, 0x08, 0x63])]) {
      const r = rawStream(addr);
      r.call.write(junk);
      expect((await r.status).code).toBe(grpc.status.INVALID_ARGUMENT);
    }

    // A real transport still gets through.
    const a = new TestNode('a');
    started.push(a);
    const ta = a.start({ b: addr });
    ta.send([appMsg('a', 'b', 3)]);
    await waitFor('delivery after the bad streams', () => b.received.length === 2);
    expect(b.received[1]!.index).toBe(3);
  });

  it('a client that half-closes gets status OK; a closed transport refuses new streams', async () => {
    const b = new TestNode('b');
    started.push(b);
    const port = await b.listen();
    const tb = b.start({});
    const addr = `127.0.0.1:${port}`;

    const ok = rawStream(addr);
    ok.call.write(Buffer.from(encodeMessageBatch([appMsg('x', 'b', 1)])));
    ok.call.end();
    expect((await ok.status).code).toBe(grpc.status.OK);
    expect(b.received).toHaveLength(1);

    const open = rawStream(addr);
    open.call.write(Buffer.from(encodeMessageBatch([appMsg('x', 'b', 2)])));
    await waitFor('second', () => b.received.length === 2);
    await tb.close(); // ends inbound streams too; the server keeps running
    expect((await open.status).code).toBe(grpc.status.OK);

    const late = rawStream(addr);
    late.call.write(Buffer.from(encodeMessageBatch([appMsg('x', 'b', 3)])));
    expect((await late.status).code).toBe(grpc.status.UNAVAILABLE);
    expect(b.received).toHaveLength(2);
  });
});
