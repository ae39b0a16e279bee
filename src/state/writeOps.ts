// The ops of a fenced write (registry/write.ts), as the key-value store applies them.

export interface PutOp {
  type: 'put';
  key: string;
  value: Uint8Array;
}

export interface DeleteOp {
  type: 'delete';
  key: string;
}

export type WriteOp = PutOp | DeleteOp;
