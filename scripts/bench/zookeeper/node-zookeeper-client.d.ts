// The part of node-zookeeper-client 1.1 (plain JavaScript, no types of its own) that the benchmark uses.
declare module 'node-zookeeper-client' {
  import type { EventEmitter } from 'node:events';

  export class Exception extends Error {
    static readonly NO_NODE: number;
    static readonly NODE_EXISTS: number;
    getCode(): number;
    getName(): string;
  }

  export class Event {
    static readonly NODE_DELETED: number;
    getType(): number;
    getName(): string;
    getPath(): string;
  }

  export const CreateMode: { readonly PERSISTENT: number; readonly EPHEMERAL_SEQUENTIAL: number };

  export interface Stat {
    version: number;
  }

  type Callback<T> = (error: Exception | null, result: T) => void;

  export interface Transaction {
    check(path: string, version?: number): Transaction;
    setData(path: string, data: Buffer | null, version?: number): Transaction;
    commit(callback: Callback<unknown>): void;
  }

  /** A packet as the connection manager sends it: it numbers `header.xid` and matches the reply by it. */
  export interface QueuedRequest {
    header: { xid: number; type: number };
    payload: null;
    toBuffer(): Buffer;
  }

  export interface ConnectionManager {
    queue(request: QueuedRequest, callback: (error: Exception | null) => void): void;
  }

  export interface Client extends EventEmitter {
    readonly connectionManager: ConnectionManager;
    connect(): void;
    close(): void;
    create(path: string, data: Buffer | null, mode: number, callback: Callback<string>): void;
    mkdirp(path: string, callback: Callback<string>): void;
    remove(path: string, version: number, callback: (error: Exception | null) => void): void;
    getData(path: string, callback: Callback<Buffer | undefined>): void;
    exists(path: string, watcher: (event: Event) => void, callback: Callback<Stat | null>): void;
    getChildren(path: string, callback: Callback<string[]>): void;
    getChildren(path: string, watcher: (event: Event) => void, callback: Callback<string[]>): void;
    transaction(): Transaction;
  }

  export function createClient(connectionString: string, options?: { sessionTimeout?: number; spinDelay?: number; retries?: number }): Client;
}
