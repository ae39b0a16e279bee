// check-resource against one Redis key, written through the fencing script (src/fencing/redis fencedUpdate).
// Every write sets the key to the value it had when the command started: the value stays as it is, only the
// key's watermark (fencing:mark:KEY) and its operation records change.
import { Redis } from 'ioredis';
import { fencedUpdate } from '../redis/fenced';
import { checkDataKey, markKey } from '../redis/keys';
import { RAISE_SCRIPT } from '../redis/script';
import type { CheckedClaim } from '../token';
import { ResourceNotReady, type CheckTarget, type WriteOutcome } from './target';
import { refusedOutcome } from './outcome';

export interface RedisTargetOptions {
  /** redis://[user@]host:port[/db] (or rediss://). */
  url: string;
  /** Used when the URL has none (the command passes REDISCLI_AUTH), so that no password shows in `ps`. */
  password?: string;
  /** The dedicated key (a string value; it must exist). */
  key: string;
  /** Per command; default 10 s. */
  timeoutMs?: number;
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RangeError(`--redis: ${JSON.stringify(text)} is not a URL (redis://host:port)`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new RangeError(`--redis: ${JSON.stringify(text)} is not a redis:// or rediss:// URL`);
  return url;
}

/** The database number of redis://host:port/N (default 0). */
function dbOf(url: URL): number {
  const path = url.pathname.replace(/^\//, '');
  if (path === '') return 0;
  if (!/^[0-9]{1,5}$/.test(path)) throw new RangeError(`--redis: the path of ${JSON.stringify(url.href)} must be a database number, not ${JSON.stringify(path)}`);
  return Number(path);
}

export class RedisTarget implements CheckTarget {
  readonly kind = 'redis';
  readonly storesAnswers = true;
  readonly resource: string;
  private readonly redis: Redis;
  /** The key's value when the command started: what every write sets it to. */
  private value: string | undefined;

  constructor(private readonly o: RedisTargetOptions) {
    checkDataKey(o.key);
    const url = parseUrl(o.url);
    this.resource = `key ${JSON.stringify(o.key)}`;
    const timeout = o.timeoutMs ?? 10_000;
    // One attempt, no reconnecting and no offline queue: an unreachable server fails the command at once.
    // From the URL's parts: ioredis takes a URL's user without a password for the password.
    this.redis = new Redis({
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port || 6379),
      username: decodeURIComponent(url.username) || undefined,
      password: decodeURIComponent(url.password) || o.password,
      db: dbOf(url),
      tls: url.protocol === 'rediss:' ? { servername: url.hostname } : undefined,
      lazyConnect: true,
      connectTimeout: timeout,
      commandTimeout: timeout,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableOfflineQueue: false,
    });
    // Reported by the command that failed; the 'error' event must not crash the process.
    this.redis.on('error', () => undefined);
  }

  async prepare(lock: string): Promise<void> {
    try {
      await this.redis.connect();
    } catch (err) {
      throw new ResourceNotReady(`cannot connect to Redis: ${(err as Error).message}`, true);
    }
    try {
      const type = await this.redis.type(this.o.key);
      if (type === 'none') throw new ResourceNotReady(`${this.resource}: no such key. Create the dedicated key first (SET ${this.o.key} ...); check-resource only updates it`, false);
      if (type !== 'string') throw new ResourceNotReady(`${this.resource} holds a ${type}: the fencing script fences string keys only`, false);
      this.value = (await this.redis.get(this.o.key)) ?? '';
      const bound = await this.redis.hget(markKey(this.o.key), 'lock');
      if (bound && bound !== lock) {
        throw new ResourceNotReady(`${this.resource} is bound to lock ${JSON.stringify(bound)}, not ${JSON.stringify(lock)}: give a key of its own to check with --lock ${JSON.stringify(lock)}`, false);
      }
    } catch (err) {
      throw err instanceof ResourceNotReady ? err : new ResourceNotReady(`cannot read ${this.resource}: ${(err as Error).message}`, false);
    }
  }

  async write(claim: CheckedClaim): Promise<WriteOutcome> {
    if (this.value === undefined) throw new Error('check-resource: write before prepare');
    const o = await fencedUpdate(this.redis, { key: this.o.key, value: this.value }, claim);
    switch (o.status) {
      case 'APPLIED':
      case 'REPLAYED':
        return { status: o.status, detail: `fence ${o.token}, step ${o.step}` };
      default:
        return refusedOutcome(o, 'key');
    }
  }

  /** What raiseWatermarks does after a restore, for the dedicated key only (not every key it prefixes). */
  async raise(minToken: bigint): Promise<void> {
    await this.redis.eval(RAISE_SCRIPT, 1, markKey(this.o.key), minToken.toString());
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
