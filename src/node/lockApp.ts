import { EventEmitter } from 'node:events';
import { decodeCommand } from '../codec/commandCodec';
import type { CommandResult, LockEvent } from '../state';
import { LockStateMachine } from '../state';
import type { ReplicatedApp, SnapshotJob } from './replicatedApp';

/**
 * The lock state machine as the Raft driver's application: decodes entries, applies them and publishes
 * the lock events of every applied entry (for blocked Acquires, watch streams and session leases).
 * Events: 'applied' (index, Command, CommandResult) for every applied command; 'restored' after a snapshot
 * replaced the state.
 */
export class LockApp extends EventEmitter implements ReplicatedApp<CommandResult> {
  machine = new LockStateMachine();
  /** The state decoded by the last validateSnapshot(), kept for the restore() of the same bytes. */
  private validated: { data: Uint8Array; machine: LockStateMachine } | undefined;

  /** `snapshotSliceUnits`: the work of one slice of snapshot encoding (LockStateMachine.captureSnapshot). */
  constructor(private readonly snapshotSliceUnits?: number) {
    super();
    // One listener per watch stream: their number is bounded by the server's connections, not by 10.
    this.setMaxListeners(0);
  }

  apply(index: number, data: Uint8Array): CommandResult {
    const command = decodeCommand(data);
    if (command.type === 'Undecodable') {
      return { result: { status: 'invalid', message: `undecodable entry: ${command.error}` }, events: [], duplicate: false };
    }
    // Unchecked: the machine validates it, answers `invalid` if need be, and keeps that answer for a retry.
    const outcome = this.machine.apply(index, command);
    this.emit('applied', index, command, outcome);
    return outcome;
  }

  captureSnapshot(): SnapshotJob {
    return this.machine.captureSnapshot(this.snapshotSliceUnits);
  }

  /** The state's snapshot, encoded at once (tests and tools; a node encodes a capture in slices). */
  snapshot(): Uint8Array {
    return this.machine.writeSnapshot();
  }

  restore(data: Uint8Array): void {
    const validated = this.validated;
    this.validated = undefined;
    this.machine = validated?.data === data ? validated.machine : LockStateMachine.readSnapshot(data);
    this.emit('restored');
  }

  /** The full decode and check restore() does (encoding, ids, order, cross-references), without installing. */
  validateSnapshot(data: Uint8Array): void {
    this.validated = undefined;
    const machine = LockStateMachine.readSnapshot(data);
    this.validated = { data, machine };
  }
}

export type { LockEvent };
