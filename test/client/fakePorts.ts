// Virtual ports for the client (src/client/ports.ts): a clock and timers that move only when the test says,
// and a transport whose calls the test answers. Nothing here waits on real time.
import { EventEmitter } from 'node:events';
import type { ClientClock, ClientTimer, ClientTimers } from '../../src/client/ports';
import type { MethodDesc } from '../../src/client/proto';
import type { BidiStreamCall, ClientTransport, ServerStreamCall, UnaryCall } from '../../src/client/transport';

interface FakeTimer extends ClientTimer {
  readonly id: number;
}

interface Armed {
  at: number;
  fn: () => void;
  /** Set for an interval: re-armed this much later each time it fires. */
  every?: number;
}

/** Lets every promise chain started by a timer run to its end before the next timer fires. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A monotonic clock and timers on virtual time, which only advanceTo moves. */
export class FakeTime implements ClientClock, ClientTimers {
  private now: number;
  private nextId = 1;
  private readonly armed = new Map<number, Armed>();

  constructor(start = 0) {
    this.now = start;
  }

  monotonicMs(): number {
    return this.now;
  }

  setTimeout(fn: () => void, ms: number): ClientTimer {
    return this.arm({ at: this.now + Math.max(0, ms), fn });
  }

  setInterval(fn: () => void, ms: number): ClientTimer {
    const every = Math.max(1, ms);
    return this.arm({ at: this.now + every, fn, every });
  }

  clearTimeout(timer: ClientTimer | undefined): void {
    if (timer) this.armed.delete((timer as FakeTimer).id);
  }

  clearInterval(timer: ClientTimer | undefined): void {
    this.clearTimeout(timer);
  }

  /** Moves the clock to `to`, firing every timer due by then at its own time, earliest (then oldest) first. */
  async advanceTo(to: number): Promise<void> {
    for (let next = this.nextDue(to); next; next = this.nextDue(to)) {
      const [id, timer] = next;
      this.now = timer.at;
      if (timer.every === undefined) this.armed.delete(id);
      else timer.at += timer.every;
      timer.fn();
      await settle();
    }
    this.now = Math.max(this.now, to);
    await settle();
  }

  private nextDue(by: number): [number, Armed] | undefined {
    let best: [number, Armed] | undefined;
    for (const entry of this.armed) if (entry[1].at <= by && (!best || entry[1].at < best[1].at)) best = entry;
    return best;
  }

  private arm(timer: Armed): FakeTimer {
    const id = this.nextId++;
    this.armed.set(id, timer);
    const handle: FakeTimer = { id, unref: () => handle };
    return handle;
  }
}

/** One bidirectional stream of the fake transport: records what the client writes; the test replies. */
export class FakeBidiStream<Req, Res> extends EventEmitter implements BidiStreamCall<Req, Res> {
  readonly written: Req[] = [];
  ended = false;
  cancelled = false;

  constructor(
    readonly address: string,
    readonly path: string,
  ) {
    super();
  }

  write(req: Req): boolean {
    this.written.push(req);
    return true;
  }

  end(): void {
    this.ended = true;
  }

  cancel(): void {
    this.cancelled = true;
  }

  reply(res: Res): void {
    this.emit('data', res);
  }
}

/** A transport whose unary calls `answer` resolves (by method path) and whose streams the test drives. */
export class FakeTransport implements ClientTransport {
  readonly unaryCalls: Array<{ address: string; path: string; req: unknown }> = [];
  readonly streams: Array<FakeBidiStream<unknown, unknown>> = [];
  closed = false;

  constructor(private readonly answer: (path: string, req: unknown) => unknown) {}

  unary<Req, Res>(address: string, m: MethodDesc<Req, Res>, req: Req): UnaryCall<Res> {
    this.unaryCalls.push({ address, path: m.path, req });
    return { response: Promise.resolve().then(() => this.answer(m.path, req) as Res), cancel: () => undefined };
  }

  serverStream<Req, Res>(_address: string, m: MethodDesc<Req, Res>): ServerStreamCall<Res> {
    throw new Error(`FakeTransport: no server stream scripted (${m.path})`);
  }

  bidiStream<Req, Res>(address: string, m: MethodDesc<Req, Res>): BidiStreamCall<Req, Res> {
    const stream = new FakeBidiStream<Req, Res>(address, m.path);
    this.streams.push(stream as FakeBidiStream<unknown, unknown>);
    return stream;
  }

  close(): void {
    this.closed = true;
  }
}
