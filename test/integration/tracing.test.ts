// Issue 35: a lock's life as OpenTelemetry traces, over real processes. A 3-node cluster with `tracing` on and
// this process's client (startTracing) export by OTLP/HTTP to a receiver written here (node:http on 127.0.0.1,
// decoding the OTLP JSON export requests). One lock cycle (acquire, fenced write, a downstream write, release)
// and a stale write refused at a fenced HTTP service and at the cluster: the client's spans are the parents of the leader's,
// and the service's refusal of the stale token joins the stale holder's trace through traceparent and baggage.
import { PGlite } from '@electric-sql/pglite';
import { readFileSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { trace } from '@opentelemetry/api';
import { FenceLockClient, type FenceLockError } from '../../src/client';
import { CallCoalescer } from '../../src/client/callCoalescer';
import { ensureFencingSchema } from '../../src/fencing';
import { startTracing, type Tracing } from '../../src/tracing/start';
import { ACCOUNT_TABLES, startAccountService, type AccountService } from '../fencing/service';
import { eventually, LocalCluster } from './harness';

interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
  events: string[];
  error: boolean;
}

/** An OTLP/HTTP collector of traces: POST /v1/traces with an ExportTraceServiceRequest as JSON. */
class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      this.decode(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }

  private decode(body: ExportRequest): void {
    for (const rs of body.resourceSpans ?? []) {
      const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            service,
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            attributes: attributesOf(s.attributes),
            events: (s.events ?? []).map((e) => e.name),
            error: s.status?.code === 2,
          });
        }
      }
    }
  }
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttributes = Array<{ key: string; value: OtlpValue }> | undefined;
interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttributes };
    scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: OtlpAttributes; events?: Array<{ name: string }>; status?: { code?: number } }> }>;
  }>;
}

function attributesOf(list: OtlpAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.boolValue ?? value.doubleValue ?? '';
  return out;
}

let receiver: OtlpReceiver;
let cluster: LocalCluster;
let tracing: Tracing;
let client: FenceLockClient;
let pglite: PGlite;
let service: AccountService;

beforeAll(async () => {
  receiver = new OtlpReceiver();
  const endpoint = await receiver.start();
  cluster = await LocalCluster.create({ size: 3 });
  for (const node of cluster.nodes) {
    const config = JSON.parse(readFileSync(node.configFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(node.configFile, JSON.stringify({ ...config, tracing: { otlpEndpoint: endpoint, serviceName: `fencelock-${node.id}` } }));
  }
  cluster.startAll();
  tracing = startTracing({ otlpEndpoint: endpoint, serviceName: 'tracing-test-client' });
  client = new FenceLockClient({ endpoints: cluster.endpoints });
  await eventually(async () => ((await client.statusAll()).some((s) => s.ok && s.status.role === 'leader') ? true : undefined), 20_000, 'a leader');
  pglite = await PGlite.create();
  for (const t of ACCOUNT_TABLES) await pglite.exec(t);
  await pglite.exec('INSERT INTO account (id, balance) VALUES (1, 0)');
  await ensureFencingSchema(pglite);
  service = await startAccountService(pglite);
}, 120_000);

afterAll(async () => {
  await service?.close();
  await client?.close();
  await tracing?.shutdown();
  await cluster?.destroy();
  await pglite?.close();
  await receiver?.stop();
});

async function post(headers: Record<string, string>, balance: number): Promise<number> {
  const res = await fetch(`${service.url}/accounts/1`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ balance }) });
  await res.arrayBuffer();
  return res.status;
}

function one(what: string, match: (s: ReceivedSpan) => boolean): ReceivedSpan {
  const found = receiver.spans.filter(match);
  expect(found.map((s) => `${s.service} ${s.name}`), what).toHaveLength(1);
  return found[0]!;
}

describe('tracing (OTLP/HTTP to a real receiver)', () => {
  it('traces one lock cycle from the client through the leader; a stale write is refused in the trace it was sent in, at the cluster and downstream', async () => {
    const lock = 'traced/account-1';
    const a = await client.openSession({ ttlMs: 30_000 });
    const held = await a.acquire(lock);
    await held.write([{ put: `${lock}/balance`, value: '10' }]);
    expect(await post(held.fencing.headers(), 10)).toBe(200);
    // A's next step, sent late (a new step: the same step again would be a retry, answered from storage).
    const staleHeaders = held.fencing.headers(2n);
    expect(staleHeaders.traceparent, 'the fencing headers carry the trace').toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(decodeURIComponent(staleHeaders.baggage ?? '')).toContain(`fencelock.token=${held.token}`);
    await held.release();
    const b = await client.openSession({ ttlMs: 30_000 });
    const next = await b.acquire(lock);
    expect(next.token).toBeGreaterThan(held.token);
    expect(await post(next.fencing.headers(), 20)).toBe(200);
    // A's late write with its old token: refused by the service (409), in A's trace.
    expect(await post(staleHeaders, 30)).toBe(409);
    // And by the cluster: a fenced write under A's old token, sent in a span of this test, is refused STALE_TOKEN.
    const staleWrite = await trace.getTracer('tracing-test').startActiveSpan('late writer', async (span) => {
      try {
        const refusal = await client.write({ lock, token: held.token, sessionId: a.id, ops: [{ put: `${lock}/balance`, value: '30' }] }).then(
          () => undefined,
          (err: FenceLockError) => err.reason,
        );
        return { refusal, spanId: span.spanContext().spanId, traceId: span.spanContext().traceId };
      } finally {
        span.end();
      }
    });
    expect(staleWrite.refusal).toBe('STALE_TOKEN');
    await next.release();
    await a.close();
    await b.close();
    await tracing.flush();

    const token = String(held.token);
    const acquire = () => receiver.spans.find((s) => s.name === 'fencelock.acquire' && s.attributes['fencelock.token'] === token);
    await eventually(async () => {
      const acq = acquire();
      if (acq === undefined) return undefined;
      const names = receiver.spans.filter((s) => s.traceId === acq.traceId).map((s) => s.name);
      const need = ['fencelock.server Lock.Acquire', 'fencelock.server KV.Write', 'fencelock.server Lock.Release'];
      const refusedAtLeader = receiver.spans.some((s) => s.traceId === staleWrite.traceId && s.name === 'fencelock.server KV.Write');
      return refusedAtLeader && need.every((n) => names.includes(n)) && names.filter((n) => n === 'fencelock.fenced_http').length === 2 ? true : undefined;
    }, 20_000, 'the spans of the lock cycle at the receiver').catch((err: Error) => {
      throw new Error(`${err.message}; received: ${receiver.spans.map((s) => `${s.service} ${s.name} ${s.traceId.slice(0, 6)} ${JSON.stringify(s.attributes)}`).join('\n')}`);
    });

    const acq = acquire()!;
    const inTrace = (s: ReceivedSpan): boolean => s.traceId === acq.traceId;
    expect(acq.service).toBe('tracing-test-client');
    expect(acq.attributes).toMatchObject({ 'fencelock.lock': lock, 'fencelock.result': 'granted' });
    // The leader's span of the Acquire is a child of the client's acquire span, with the token and term.
    const serverAcquire = one('the leader applied the Acquire', (s) => inTrace(s) && s.name === 'fencelock.server Lock.Acquire');
    expect(serverAcquire.parentSpanId).toBe(acq.spanId);
    expect(serverAcquire.service).toMatch(/^fencelock-n[123]$/);
    expect(serverAcquire.attributes).toMatchObject({ 'fencelock.lock': lock, 'fencelock.token': token, 'fencelock.result': 'granted' });
    expect(serverAcquire.attributes['fencelock.term']).toBeGreaterThan(0);
    // The grant's hold span follows the acquire; the write and the release are its children, each with the leader's.
    const hold = one('the hold span', (s) => inTrace(s) && s.name === 'fencelock.hold');
    expect(hold.parentSpanId).toBe(acq.spanId);
    expect(hold.attributes).toMatchObject({ 'fencelock.token': token, 'fencelock.result': 'released' });
    const write = one('the fenced write', (s) => inTrace(s) && s.name === 'fencelock.write');
    expect(write.parentSpanId).toBe(hold.spanId);
    expect(write.attributes).toMatchObject({ 'fencelock.token': token, 'fencelock.keys': 1, 'fencelock.result': 'written' });
    const serverWrite = one('the leader applied the Write', (s) => inTrace(s) && s.name === 'fencelock.server KV.Write');
    expect(serverWrite.parentSpanId).toBe(write.spanId);
    expect(serverWrite.attributes).toMatchObject({ 'fencelock.token': token, 'fencelock.keys': 1, 'fencelock.result': 'written', 'fencelock.command': 'Write' });
    expect(serverWrite.service).toBe(serverAcquire.service);
    const serverRelease = one('the leader applied the Release', (s) => inTrace(s) && s.name === 'fencelock.server Lock.Release');
    expect(serverRelease.parentSpanId).toBe(hold.spanId);
    expect(serverRelease.attributes).toMatchObject({ 'fencelock.token': token, 'fencelock.result': 'released' });
    // Downstream: A's applied write and its late, refused one are both in A's trace, under the hold span.
    const downstream = receiver.spans.filter((s) => inTrace(s) && s.name === 'fencelock.fenced_http');
    expect(downstream.map((s) => s.attributes['fencelock.result']).sort()).toEqual(['APPLIED', 'STALE']);
    for (const s of downstream) {
      expect(s.parentSpanId).toBe(hold.spanId);
      expect(s.attributes).toMatchObject({ 'fencelock.token': token, 'fencelock.lock': lock, 'fencelock.token.baggage': token, 'fencelock.lock.baggage': lock });
    }
    expect(downstream.find((s) => s.attributes['fencelock.result'] === 'STALE')!.error).toBe(true);
    // The leader's span of the refused write is the child of the span it was sent in, with the refusal.
    const refused = one('the leader refused the stale write', (s) => s.traceId === staleWrite.traceId && s.name === 'fencelock.server KV.Write');
    expect(refused.parentSpanId).toBe(staleWrite.spanId);
    expect(refused.attributes).toMatchObject({ 'fencelock.token': token, 'fencelock.lock': lock, 'fencelock.result': 'STALE_TOKEN' });
    expect(refused.error).toBe(true);
    // B's grant is a trace of its own, and B's downstream write was applied in it.
    const nextAcquire = one('B acquires', (s) => s.name === 'fencelock.acquire' && s.attributes['fencelock.token'] === String(next.token));
    expect(nextAcquire.traceId).not.toBe(acq.traceId);
    expect(receiver.spans.filter((s) => s.traceId === nextAcquire.traceId && s.name === 'fencelock.fenced_http').map((s) => s.attributes['fencelock.result'])).toEqual(['APPLIED']);
  }, 90_000);

  it('the leader traces what it decides alone: an expired session and a revoked grant end in the grant\'s trace', async () => {
    const lock = 'traced/leader-decides';
    const expiring = await client.openSession({ ttlMs: 3_000 });
    const lost = await expiring.acquire(lock);
    expiring.abandon('this test lets the session expire'); // no more renewals, no close: the leader expires it
    const b = await client.openSession({ ttlMs: 30_000 });
    const revoked = await b.acquire(lock, { waitTimeoutMs: 30_000 }); // granted once the leader expired A
    await client.revokeLock(lock, { token: revoked.token, reason: 'tracing test' });
    await b.close();
    await tracing.flush();

    const endOf = (name: string, token: bigint) => receiver.spans.find((s) => s.name === name && s.attributes['fencelock.token'] === String(token));
    const acquireOf = (token: bigint) => receiver.spans.find((s) => s.name === 'fencelock.server Lock.Acquire' && s.attributes['fencelock.token'] === String(token));
    await eventually(async () => (endOf('fencelock.expire', lost.token) && endOf('fencelock.revoke', revoked.token) && acquireOf(lost.token) && acquireOf(revoked.token) ? true : undefined), 20_000, 'the expire and revoke spans').catch((err: Error) => {
      throw new Error(`${err.message}; received: ${receiver.spans.map((s) => `${s.service} ${s.name} ${JSON.stringify(s.attributes)}`).join('\n')}`);
    });
    for (const [name, handle, result] of [['fencelock.expire', lost, 'expired'], ['fencelock.revoke', revoked, 'lock_revoked']] as const) {
      const end = endOf(name, handle.token)!;
      const grant = acquireOf(handle.token)!;
      // A child of the leader's span of the Acquire that granted it: in the trace of the client's acquire.
      expect(end.traceId, name).toBe(grant.traceId);
      expect(end.parentSpanId, name).toBe(grant.spanId);
      expect(end.service, name).toBe(grant.service);
      expect(end.attributes, name).toMatchObject({ 'fencelock.lock': lock, 'fencelock.result': result });
      expect(end.attributes['fencelock.term'], name).toBeGreaterThan(0);
      expect(end.attributes['fencelock.index'], name).toBeGreaterThan(0);
      expect(end.error, name).toBe(false);
    }
    expect(endOf('fencelock.expire', lost.token)!.attributes['fencelock.session']).toBe(expiring.publicId);
    expect(receiver.spans.filter((s) => s.name === 'fencelock.expire' || s.name === 'fencelock.revoke'), 'one span per ended grant').toHaveLength(2);
  }, 90_000);

  it('coalesced Pipeline calls keep their own trace: two acquires in one batch from two parent spans land in two traces', async () => {
    const s = await client.openSession({ ttlMs: 30_000 });
    // The first call opens the stream; once the node said it takes batches, calls of one turn go as one.
    await (await s.acquire('traced/batch-warm-up')).release();
    const batches: number[] = [];
    const flush = CallCoalescer.prototype.flush;
    const spy = vi.spyOn(CallCoalescer.prototype, 'flush').mockImplementation(function (this: CallCoalescer) {
      if (this.size > 0) batches.push(this.size);
      flush.call(this);
    });
    const tracer = trace.getTracer('tracing-test');
    const under = (name: string, lock: string) =>
      tracer.startActiveSpan(name, async (span) => {
        try {
          return { handle: await s.acquire(lock), traceId: span.spanContext().traceId };
        } finally {
          span.end();
        }
      });
    let both: Array<{ handle: Awaited<ReturnType<typeof s.acquire>>; traceId: string }>;
    try {
      both = await Promise.all([under('caller one', 'traced/batch-1'), under('caller two', 'traced/batch-2')]);
    } finally {
      spy.mockRestore();
    }
    expect(batches, 'the two acquires went in one batch').toContain(2);
    for (const { handle } of both) await handle.release();
    await s.close();
    await tracing.flush();

    const serverAcquireIn = (traceId: string) => receiver.spans.filter((x) => x.traceId === traceId && x.name === 'fencelock.server Lock.Acquire');
    await eventually(async () => (both.every((b) => serverAcquireIn(b.traceId).length > 0) ? true : undefined), 20_000, 'the leader spans of both acquires').catch((err: Error) => {
      throw new Error(`${err.message}; received: ${receiver.spans.map((x) => `${x.service} ${x.name} ${x.traceId.slice(0, 6)} ${JSON.stringify(x.attributes)}`).join('\n')}`);
    });
    expect(both[0]!.traceId).not.toBe(both[1]!.traceId);
    for (const [i, { handle, traceId }] of both.entries()) {
      const clientAcquire = one(`caller ${i + 1}'s acquire`, (x) => x.traceId === traceId && x.name === 'fencelock.acquire');
      const server = serverAcquireIn(traceId);
      expect(server, `caller ${i + 1}: one leader span`).toHaveLength(1);
      expect(server[0]!.parentSpanId).toBe(clientAcquire.spanId);
      expect(server[0]!.attributes).toMatchObject({ 'fencelock.lock': `traced/batch-${i + 1}`, 'fencelock.token': String(handle.token), 'fencelock.result': 'granted' });
    }
  }, 90_000);
});
