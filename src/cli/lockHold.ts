// `fencelock lock NAME` without CMD (like `etcdctl lock NAME`): hold the lock from a shell, show its token, and
// let go on Ctrl-C, SIGTERM, SIGHUP or the end of stdin.
import type { FenceLockClient, Session } from '../client';
import { CommandFailure, EXIT } from './exitCodes';
import { grantSubject, locksJson, releaseAndClose, watchForLoss, type HeldGrantHandle } from './heldLock';
import { toJson, type CliIO } from './output';

const LET_GO_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Prints the token and the session's public handle (never its id: whoever has the id can release the lock and
 * write under it), then holds until a signal or the end of stdin (released: 0), or until the lock is lost
 * (EXIT.LOCK_LOST; with --json a LOCK_LOST failure, reported as a second line). Handlers are registered before
 * the first await, so that a Ctrl-C right after the grant still releases.
 */
export function holdUntilDone(o: { names: readonly string[]; ttlMs: number; json?: boolean }, io: CliIO, held: { session: Session; lock: HeldGrantHandle; client: FenceLockClient }): Promise<number> {
  const { session, lock } = held;
  const json = o.json === true;
  const subject = grantSubject(o.names);
  const stdin = io.stdin?.();
  return new Promise((resolve, reject) => {
    let done = false;
    let stopWatching = (): void => undefined;
    const letGo = (cause: string, lostWhy?: string): void => {
      if (done) return;
      done = true;
      stopWatching();
      for (const [sig, h] of signalHandlers) io.signals.off(sig, h);
      stdin?.off('end', onEnd).off('error', onEnd).off('data', ignore).pause();
      void releaseAndClose(subject, io, { json, ttlMs: o.ttlMs }, held, lostWhy).then((why) => {
        if (why === undefined) {
          if (!json) io.stdout(`${subject} released (${cause})\n`);
          resolve(EXIT.OK);
        } else if (json) {
          reject(new CommandFailure('LOCK_LOST', `${subject} (token ${lock.token}) ${why}`, EXIT.LOCK_LOST));
        } else {
          resolve(EXIT.LOCK_LOST);
        }
      });
    };
    const signalHandlers = LET_GO_SIGNALS.map((sig) => [sig, () => letGo(sig)] as const);
    for (const [sig, h] of signalHandlers) io.signals.on(sig, h);
    const onEnd = (): void => letGo('end of input');
    // What is typed is not read: only the end of input matters.
    const ignore = (): void => undefined;
    stdin?.on('data', ignore).on('end', onEnd).on('error', onEnd);
    stdin?.resume();

    io.stdout(
      json
        ? `${toJson({ ...locksJson(o.names), token: lock.token, session: session.publicId })}\n`
        : `${subject} held: token ${lock.token}, session ${session.publicId}; Ctrl-C or end of input (Ctrl-D) releases it\n`,
    );
    stopWatching = watchForLoss(session, lock, (why) => {
      if (!json) io.stderr(`fencelock: ${subject} (token ${lock.token}) ${why}; no longer held\n`);
      letGo('lost', why);
    });
  });
}
