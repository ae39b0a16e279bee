// A raw peer stream of the TLS framing carrier (src/transport/tlsCarrier.ts), opened as an attacker would:
// mutual TLS with whatever certificate it holds (or plain TCP), a HELLO claiming whatever it likes, and
// batches written at once without waiting for the node's verdict. What the node answers (ACCEPT, REFUSE,
// END, or nothing before closing) is read with the carrier's own frame reader.
import * as net from 'node:net';
import * as tls from 'node:tls';
import { encodeFrame, FrameKind, FrameReader, MAX_CONTROL_FRAME_BYTES, type Frame } from '../../src/transport/frames';
import type { PeerByteStream, PeerCredentials, PeerOutcome, PeerStreamResult } from './forge';

export interface FramedHello {
  clusterId: string | undefined;
  /** The node id the attacker claims ('' for none). */
  nodeId: string;
  address?: string;
}

/** What the listener said in its REFUSE frame, as the outcome the tests compare. */
function refusalOutcome(frame: Frame): { outcome: PeerOutcome; details: string } {
  const r = JSON.parse(frame.payload.toString('utf8')) as { kind?: string; why?: string; id?: string; by?: string };
  const known: PeerOutcome[] = ['denied', 'malformed', 'unavailable', 'removed'];
  const outcome = known.find((k) => k === r.kind) ?? 'closed';
  return { outcome, details: outcome === 'removed' ? `${r.id ?? '?'} was removed (says ${r.by ?? '?'})` : r.why ?? '' };
}

/**
 * Opens a framed peer stream to `address`: TLS trusting `creds.ca` with `creds`' certificate when it has one,
 * plain TCP when `creds` is null. `alpn` offers protocols (h2 reaches a gRPC listener's HTTP/2 parser).
 */
export function openFramedPeerStream(address: string, creds: PeerCredentials | null, hello: FramedHello, opts: { alpn?: string[] } = {}): PeerByteStream {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i);
  const port = Number(address.slice(i + 1));
  const socket: net.Socket = creds
    ? tls.connect({ host, port, ca: creds.ca, cert: creds.cert, key: creds.key, ALPNProtocols: opts.alpn })
    : net.connect({ host, port });
  const reader = new FrameReader(MAX_CONTROL_FRAME_BYTES);
  let admitted = false;
  let settled: { outcome: PeerOutcome; details: string } | null = null;
  let lastError = '';
  let markAdmitted: (v: boolean) => void = () => {};
  const admittedP = new Promise<boolean>((resolve) => (markAdmitted = resolve));
  const result = new Promise<PeerStreamResult>((resolve) => {
    socket.once('close', () => {
      markAdmitted(admitted);
      const end = settled ?? { outcome: 'closed' as const, details: lastError || 'closed without an answer' };
      resolve({ admitted, ...end });
    });
  });
  socket.on('error', (err) => (lastError = err.message));
  socket.on('data', (chunk: Buffer) => {
    let frames: Frame[];
    try {
      frames = reader.push(chunk);
    } catch (err) {
      lastError = `the node sent a bad frame: ${(err as Error).message}`;
      socket.destroy();
      return;
    }
    for (const f of frames) {
      if (f.kind === FrameKind.Accept) {
        admitted = true;
        markAdmitted(true);
      } else if (f.kind === FrameKind.Refuse) {
        settled = refusalOutcome(f);
      } else if (f.kind === FrameKind.End) {
        settled = { outcome: 'ended', details: 'the node ended the stream in order' };
      }
    }
  });
  const write = (bytes: Buffer): void => {
    if (!socket.destroyed) socket.write(bytes, () => undefined);
  };
  // Queued on the socket until its handshake is done, as the carrier's own dialler sends HELLO first.
  const helloBody = hello.clusterId === undefined ? { nodeId: hello.nodeId, address: hello.address ?? '' } : { clusterId: hello.clusterId, nodeId: hello.nodeId, address: hello.address ?? '' };
  write(encodeFrame(FrameKind.Hello, Buffer.from(JSON.stringify(helloBody))));
  return {
    sendBytes: (bytes) => write(encodeFrame(FrameKind.Batch, bytes)),
    admitted: admittedP,
    result,
    async finish(timeoutMs = 5_000) {
      write(encodeFrame(FrameKind.End));
      const timer = setTimeout(() => socket.destroy(), timeoutMs);
      const r = await result;
      clearTimeout(timer);
      return r;
    },
  };
}
