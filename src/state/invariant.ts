// Assertions of invariants in production code. A failed invariant means the state machine itself (or its
// caller breaking the apply contract) is wrong: continuing could make replicas diverge or a token go back,
// so it throws. Bad *input* never throws; it yields an `invalid` result instead.

export class InvariantError extends Error {
  constructor(message: string) {
    super(`state machine invariant violated: ${message}`);
    this.name = 'InvariantError';
  }
}

/** `message` may be a function, so that hot paths build the message only when the invariant fails. */
export function invariant(condition: boolean, message: string | (() => string)): asserts condition {
  if (!condition) throw new InvariantError(typeof message === 'string' ? message : message());
}
