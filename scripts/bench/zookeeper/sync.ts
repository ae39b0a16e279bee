// ZooKeeper's sync(path) for node-zookeeper-client, which has no sync(): a SyncRequest sent through the
// client's own connection manager, so it is ordered with the session's other requests like every call.
//
// Why not a plain jute.Request: the library's jute layer knows op code SYNC (9), but its reply dispatch does
// not, and a reply to an op code it does not know makes it drop the connection. The request is therefore
// queued with a header the dispatch takes for a reply without payload (DELETE's); only the wire bytes say
// SYNC. The SyncResponse's one field (the path) is not needed and is skipped with the rest of the frame: the
// library splits replies by their length prefix. The reply header's error code still fails the call.
import type { Client } from 'node-zookeeper-client';

const OP_SYNC = 9;
/** An op code whose reply has no payload, so the library's dispatch reads only the reply header. */
const OP_DELETE = 2;

/** Resolves once the server this session is connected to has caught up with the leader as of the call. */
export function sync(client: Client, path: string): Promise<void> {
  const pathBytes = Buffer.from(path, 'utf8');
  const request = {
    header: { xid: 0, type: OP_DELETE },
    payload: null,
    // Called by the connection manager after it numbered header.xid.
    toBuffer(): Buffer {
      // length, RequestHeader { xid, type }, SyncRequest { path: jute string = int32 length + UTF-8 bytes }
      const body = 4 + 4 + 4 + pathBytes.length;
      const buf = Buffer.alloc(4 + body);
      buf.writeInt32BE(body, 0);
      buf.writeInt32BE(this.header.xid, 4);
      buf.writeInt32BE(OP_SYNC, 8);
      buf.writeInt32BE(pathBytes.length, 12);
      pathBytes.copy(buf, 16);
      return buf;
    },
  };
  return new Promise((resolve, reject) => client.connectionManager.queue(request, (error) => (error ? reject(error) : resolve())));
}
