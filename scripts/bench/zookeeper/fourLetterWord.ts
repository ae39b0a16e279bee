// ZooKeeper's four-letter-word commands (`srvr`, `ruok`, ...): the command on a fresh connection to the client
// port, the server's answer until it closes the connection. Only whitelisted words are answered
// (4lw.commands.whitelist in zoo.cfg).
import * as net from 'node:net';

/** The server's answer to `word`; rejects when it cannot connect or does not answer within `timeoutMs`. */
export function fourLetterWord(port: number, word: string, timeoutMs = 1_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer to ${word} within ${timeoutMs} ms`)));
    socket.on('connect', () => socket.write(word));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', (hadError) => {
      if (!hadError) resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** "leader", "follower", ... from a `srvr` answer; undefined when the server is not serving yet. */
export function serverMode(srvr: string): string | undefined {
  return /^Mode:\s*(\S+)/m.exec(srvr)?.[1];
}
