#!/usr/bin/env python3
"""fencelock's gRPC promises, checked by a client written from proto/fencelock/v1/lock.proto and the README alone.

A second language proves that the proto and the README are the contract, not the TypeScript client. The stubs
are generated from lock.proto at run time (grpc_tools.protoc) into a temporary directory. Prints one line per
check ("ok   NAME: ..." or "FAIL NAME: ...") and a summary; exits 1 if any check failed, 2 on bad usage.

usage: conformance.py --proto-dir DIR --cacert CA.pem [--cert C --key K] ADDRESS ADDRESS ...
"""
import argparse
import importlib
import os
import queue
import re
import secrets
import shutil
import sys
import tempfile
import threading
import time

import grpc
from grpc_tools import protoc

CALL_TIMEOUT_S = 10


def generate_stubs(proto_dir):
    """lock_pb2 and lock_pb2_grpc, generated now from the proto (never committed)."""
    out = tempfile.mkdtemp(prefix='fencelock-py-stubs-')
    args = ['protoc', f'-I{proto_dir}', f'--python_out={out}', f'--grpc_python_out={out}',
            os.path.join(proto_dir, 'fencelock', 'v1', 'lock.proto')]
    if protoc.main(args) != 0:
        raise SystemExit(f'grpc_tools.protoc failed on {proto_dir}')
    sys.path.insert(0, out)
    return out, importlib.import_module('fencelock.v1.lock_pb2'), importlib.import_module('fencelock.v1.lock_pb2_grpc')


class Failed(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Failed(what)


class Checks:
    def __init__(self):
        self.failed = 0
        self.passed = 0

    def run(self, name, fn):
        try:
            detail = fn()
            self.passed += 1
            print(f'ok   {name}: {detail}', flush=True)
        except Exception as err:  # any failure, also an unexpected RPC error, is this check's failure
            self.failed += 1
            if isinstance(err, grpc.RpcError):
                text = f'unexpected {err.code().name}: {err.details()}'
            else:
                text = str(err) if isinstance(err, Failed) else f'{type(err).__name__}: {err}'
            print(f'FAIL {name}: {text}', flush=True)


def fencelock_metadata(err):
    """The fencelock-* metadata of a refused call (trailers, or headers for a trailers-only answer)."""
    pairs = list(err.trailing_metadata() or ()) + list(err.initial_metadata() or ())
    return {k: v for k, v in pairs if k.startswith('fencelock-')}


def refused(fn):
    try:
        answer = fn()
    except grpc.RpcError as err:
        return err
    raise Failed(f'expected a refusal, got {answer!r}')


class Client:
    """Stubs on one node, with this program's client id and increasing request ids."""

    def __init__(self, pb, pb_grpc, address, creds, client_id):
        self.pb = pb
        self.address = address
        self.channel = grpc.secure_channel(address, creds)
        self.session = pb_grpc.SessionStub(self.channel)
        self.lock = pb_grpc.LockStub(self.channel)
        self.kv = pb_grpc.KVStub(self.channel)
        self.cluster = pb_grpc.ClusterStub(self.channel)
        self.pipeline = pb_grpc.PipelineStub(self.channel)
        self.client_id = client_id
        self.next_id = 0

    def header(self):
        self.next_id += 1
        return self.pb.RequestHeader(client_id=self.client_id, request_id=self.next_id)

    def status(self):
        return self.cluster.Status(self.pb.StatusRequest(), timeout=CALL_TIMEOUT_S)

    def open(self, ttl_ms, header=None):
        req = self.pb.OpenSessionRequest(header=header or self.header(), ttl_ms=ttl_ms, client_name='python-conformance')
        return self.session.Open(req, timeout=CALL_TIMEOUT_S)

    def acquire_req(self, lock, session_id):
        return self.pb.AcquireRequest(header=self.header(), lock=lock, session_id=session_id, wait_timeout_ms=0)

    def write_req(self, lock, token, session_id, key, value):
        op = self.pb.Op(type=self.pb.Op.PUT, key=key, value=value)
        return self.pb.WriteRequest(header=self.header(), lock=lock, token=token, session_id=session_id, ops=[op])

    def calls(self, requests):
        """Answers of the Pipeline stream to CallRequests, by call_id; the stream is half-closed once all came."""
        done = threading.Event()

        def send():
            yield from requests
            done.wait(CALL_TIMEOUT_S)

        answers = {}
        stream = self.pipeline.Calls(send(), timeout=CALL_TIMEOUT_S)
        for answer in stream:
            answers[answer.call_id] = answer
            if len(answers) == len(requests):
                done.set()
        return answers

    def close(self):
        self.channel.close()


def find_leader(clients):
    """Every node up and agreeing on one leader; returns (leader, a follower)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            statuses = [c.status() for c in clients]
            leaders = [i for i, s in enumerate(statuses) if s.role == 'leader']
            if len(leaders) == 1 and all(s.leader == statuses[leaders[0]].id for s in statuses):
                leader = clients[leaders[0]]
                return leader, next(c for c in clients if c is not leader), statuses[leaders[0]]
        except grpc.RpcError:
            pass
        if time.monotonic() > deadline:
            raise Failed('no leader that all nodes know within 60 s')
        time.sleep(0.2)


def unary_outcome(fn, req):
    """('ok', response) or ('error', code value, details, fencelock metadata): what a Pipeline answer must equal."""
    try:
        return ('ok', fn(req, timeout=CALL_TIMEOUT_S))
    except grpc.RpcError as err:
        return ('error', err.code().value[0], err.details(), fencelock_metadata(err))


def pipeline_outcome(answer):
    if answer.code == 0:
        return ('ok', getattr(answer, answer.WhichOneof('result')))
    return ('error', answer.code, answer.message, dict(answer.metadata))


def read(path):
    if not path:
        return None
    with open(path, 'rb') as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--proto-dir', required=True)
    ap.add_argument('--cacert', required=True)
    ap.add_argument('--cert')
    ap.add_argument('--key')
    ap.add_argument('addresses', nargs='+')
    args = ap.parse_args()

    stubs_dir, pb, pb_grpc = generate_stubs(args.proto_dir)
    creds = grpc.ssl_channel_credentials(root_certificates=read(args.cacert), private_key=read(args.key), certificate_chain=read(args.cert))
    client_id = 'py-' + secrets.token_hex(8)
    clients = [Client(pb, pb_grpc, a, creds, client_id) for a in args.addresses]
    checks = Checks()
    try:
        run_checks(checks, pb, clients)
    finally:
        for c in clients:
            c.close()
        shutil.rmtree(stubs_dir, ignore_errors=True)
    print(f'{checks.passed + checks.failed} checks, {checks.failed} failed', flush=True)
    return 1 if checks.failed else 0


def run_checks(checks, pb, clients):
    s = {}  # what later checks build on

    def cluster_leader():
        s['leader'], s['follower'], st = find_leader(clients)
        s['leader_address'] = st.leader_address
        expect(st.leader_address == s['leader'].address, f'leader_address {st.leader_address!r} is not {s["leader"].address!r}')
        return f'{st.id} at {st.leader_address} (term {st.term}), {len(clients)} nodes agree'
    checks.run('cluster.leader', cluster_leader)
    if 'leader' not in s:
        return
    L, F = s['leader'], s['follower']
    tag = secrets.token_hex(4)
    lock_a, lock_b = f'py/{tag}/a', f'py/{tag}/b'

    def session_open():
        before = L.status().sessions
        h = L.header()
        first = L.open(60_000, h)
        expect(re.fullmatch(r'[0-9a-f]{32}', first.session_id), f'session_id {first.session_id!r} is not 32 hex characters')
        expect(first.ttl_ms == 60_000, f'ttl_ms {first.ttl_ms}')
        expect(first.election_timeout_ms > 0, f'election_timeout_ms {first.election_timeout_ms}')
        again = L.open(60_000, h)  # a retry: the same client_id and request_id
        expect(again == first, f'the retry answered {again} rather than {first}')
        after = L.status().sessions
        expect(after == before + 1, f'sessions went from {before} to {after}: the retried Open applied {after - before} times')
        s['sid'] = first.session_id
        return f'session {first.session_id[:8]}..., ttl_ms {first.ttl_ms}; its retry answered the same session, opened once'
    checks.run('session.open (and its retry)', session_open)
    if 'sid' not in s:
        return
    sid = s['sid']

    def acquire():
        first = L.lock.Acquire(L.acquire_req(lock_a, sid), timeout=CALL_TIMEOUT_S)
        expect(first.acquired and first.token > 0, f'answer {first}')
        L.lock.Release(pb.ReleaseRequest(header=L.header(), lock=lock_a, session_id=sid, token=first.token), timeout=CALL_TIMEOUT_S)
        again = L.lock.Acquire(L.acquire_req(lock_a, sid), timeout=CALL_TIMEOUT_S)
        expect(again.acquired and again.token > first.token, f'the next grant has token {again.token}, not above {first.token}')
        other = L.lock.Acquire(L.acquire_req(lock_b, sid), timeout=CALL_TIMEOUT_S)
        expect(other.acquired and other.token > again.token, f'a later grant of another lock has token {other.token}, not above {again.token}')
        desc = L.lock.Describe(pb.DescribeRequest(lock=lock_a), timeout=CALL_TIMEOUT_S)
        expect(desc.held and desc.token == again.token and desc.latest_token == again.token, f'Describe says {desc}')
        s.update(t1=first.token, t2=again.token, tb=other.token)
        return f'tokens {first.token} < {again.token} (after a release) < {other.token} (another lock), positive integers'
    checks.run('lock.acquire tokens increase', acquire)
    if 't2' not in s:
        return
    t1, t2, tb = s['t1'], s['t2'], s['tb']
    key_a = f'{lock_a}/x'

    def fenced_write():
        w = L.kv.Write(L.write_req(lock_a, t2, sid, key_a, b'hello'), timeout=CALL_TIMEOUT_S)
        expect(w.index > t2, f'index {w.index} not after the grant at {t2}')
        got = L.kv.Get(pb.GetRequest(key=key_a), timeout=CALL_TIMEOUT_S)
        expect(got.found and got.value == b'hello' and got.token == t2 and got.lock == lock_a, f'Get says {got}')
        return f'applied at index {w.index}; Get: value, watermark {got.token}, lock {got.lock}'
    checks.run('kv.write fenced write accepted', fenced_write)

    def stale():
        err = refused(lambda: L.kv.Write(L.write_req(lock_a, t1, sid, key_a, b'late'), timeout=CALL_TIMEOUT_S))
        md = fencelock_metadata(err)
        expect(err.code() == grpc.StatusCode.FAILED_PRECONDITION, f'status {err.code().name}')
        expect(md.get('fencelock-reason') == 'STALE_TOKEN', f'metadata {md}')
        expect(md.get('fencelock-watermark') == str(t2), f'watermark {md.get("fencelock-watermark")!r}, expected {t2}')
        expect(err.details().startswith('STALE_TOKEN'), f'message {err.details()!r}')
        return f'FAILED_PRECONDITION, fencelock-reason STALE_TOKEN, fencelock-watermark {t2}'
    checks.run('kv.write stale token refused', stale)

    def wrong_lock():
        err = refused(lambda: L.kv.Write(L.write_req(lock_b, tb, sid, key_a, b'x'), timeout=CALL_TIMEOUT_S))
        md = fencelock_metadata(err)
        expect(err.code() == grpc.StatusCode.FAILED_PRECONDITION, f'status {err.code().name}')
        expect(md.get('fencelock-reason') == 'WRONG_LOCK', f'metadata {md}')
        expect(md.get('fencelock-key') == key_a and md.get('fencelock-key-lock') == lock_a, f'metadata {md}')
        expect(md.get('fencelock-watermark') == str(tb), f'watermark {md.get("fencelock-watermark")!r}, expected {tb}')
        return f'FAILED_PRECONDITION, WRONG_LOCK, fencelock-key {key_a}, fencelock-key-lock {lock_a}'
    checks.run('kv.write key of another lock refused', wrong_lock)

    def unknown_session():
        ghost = secrets.token_hex(16)
        err = refused(lambda: L.kv.Write(L.write_req(lock_b, tb, ghost, f'{lock_b}/y', b'x'), timeout=CALL_TIMEOUT_S))
        md = fencelock_metadata(err)
        expect(err.code() == grpc.StatusCode.NOT_FOUND, f'status {err.code().name}')
        expect(md.get('fencelock-reason') == 'UNKNOWN_SESSION', f'metadata {md}')
        return f'NOT_FOUND, fencelock-reason UNKNOWN_SESSION'
    checks.run('kv.write unknown session refused', unknown_session)

    def retries():
        key = f'{lock_a}/retry'
        first_req = L.write_req(lock_a, t2, sid, key, b'one')
        first = L.kv.Write(first_req, timeout=CALL_TIMEOUT_S)
        second = L.kv.Write(L.write_req(lock_a, t2, sid, key, b'two'), timeout=CALL_TIMEOUT_S)
        again = L.kv.Write(first_req, timeout=CALL_TIMEOUT_S)
        expect(again == first, f'the retry answered index {again.index}, the first time {first.index}')
        got = L.kv.Get(pb.GetRequest(key=key), timeout=CALL_TIMEOUT_S)
        expect(got.value == b'two', f'the key holds {got.value!r}: the retried write applied again')
        acq_req = L.acquire_req(lock_b, sid)  # already held by this session: answered, then retried
        acq = L.lock.Acquire(acq_req, timeout=CALL_TIMEOUT_S)
        acq_again = L.lock.Acquire(acq_req, timeout=CALL_TIMEOUT_S)
        expect(acq_again == acq, f'the retried Acquire answered {acq_again}, the first time {acq}')
        return f'Write retry answered index {first.index} again after a later write at {second.index}, not reapplied; Acquire retry identical'
    checks.run('retry answered as the first time', retries)

    def follower_hint():
        st = F.status()
        expect(st.role == 'follower' and st.leader_address == s['leader_address'], f'follower status {st.role} {st.leader_address}')
        seen = []
        for name, call in [
            ('Session.Open', lambda: F.open(60_000)),
            ('Lock.Acquire', lambda: F.lock.Acquire(F.acquire_req(lock_a, sid), timeout=CALL_TIMEOUT_S)),
            ('KV.Write', lambda: F.kv.Write(F.write_req(lock_a, t2, sid, key_a, b'f'), timeout=CALL_TIMEOUT_S)),
        ]:
            err = refused(call)
            md = fencelock_metadata(err)
            expect(err.code() == grpc.StatusCode.UNAVAILABLE, f'{name}: status {err.code().name}')
            expect(md.get('fencelock-leader') == s['leader_address'], f'{name}: fencelock-leader {md.get("fencelock-leader")!r}')
            seen.append(name)
        return f'{", ".join(seen)} at follower {F.address}: UNAVAILABLE, fencelock-leader {s["leader_address"]}'
    checks.run('follower answers with a leader hint', follower_hint)

    def pipeline_equals_unary():
        cases = [  # (what, unary method, request, CallRequest field): each request sent unary first, then on the stream
            ('Get', L.kv.Get, pb.GetRequest(key=key_a), 'get'),
            ('Write (its retry)', L.kv.Write, L.write_req(lock_a, t2, sid, f'{lock_a}/p', b'p'), 'write'),
            ('Acquire (its retry)', L.lock.Acquire, L.acquire_req(lock_b, sid), 'acquire'),
            ('Write STALE_TOKEN', L.kv.Write, L.write_req(lock_a, t1, sid, key_a, b's'), 'write'),
            ('Write WRONG_LOCK', L.kv.Write, L.write_req(lock_b, tb, sid, key_a, b'w'), 'write'),
            ('Write UNKNOWN_SESSION', L.kv.Write, L.write_req(lock_b, tb, secrets.token_hex(16), f'{lock_b}/z', b'u'), 'write'),
        ]
        unary = [unary_outcome(fn, req) for _, fn, req, _ in cases]
        requests = [pb.CallRequest(call_id=i + 1, timeout_ms=CALL_TIMEOUT_S * 1000, **{field: req}) for i, (_, _, req, field) in enumerate(cases)]
        answers = L.calls(requests)
        for i, (what, _, _, _) in enumerate(cases):
            expect(i + 1 in answers, f'{what}: no answer with call_id {i + 1}')
            piped = pipeline_outcome(answers[i + 1])
            expect(piped == unary[i], f'{what}: the Pipeline answered {piped}, unary {unary[i]}')
        f_req = F.acquire_req(lock_a, sid)
        f_unary = unary_outcome(F.lock.Acquire, f_req)
        f_piped = pipeline_outcome(F.calls([pb.CallRequest(call_id=1, acquire=f_req)])[1])
        expect(f_piped == f_unary and f_unary[0] == 'error', f'at the follower: Pipeline {f_piped}, unary {f_unary}')
        return f'{len(cases) + 1} calls (results, refusals with their code, message and fencelock-* metadata, a follower\'s hint) answered alike'
    checks.run('pipeline equals unary', pipeline_equals_unary)

    def keepalive():
        ttl = 6_000
        session_id = L.open(ttl).session_id
        requests = queue.Queue()

        def send():
            while (req := requests.get()) is not None:
                yield req

        stream = L.session.KeepAlive(send(), timeout=30)
        seen = []
        try:
            for renewal_id, idle_s in [(1, 0), (2, 4.0), (3, 0.5), (4, 4.0)]:
                # 4 s unrenewed: past half the TTL, so the leader has checkpointed the lease; the renewal that
                # follows is answered once its checkpoint is reset (the case that sent fractions to the wire).
                time.sleep(idle_s)
                requests.put(pb.KeepAliveRequest(session_id=session_id, renewal_id=renewal_id))
                answer = next(stream)
                expect(answer.session_id == session_id and answer.alive and answer.renewal_id == renewal_id, f'answer {answer}')
                expect(0 < answer.remaining_ms <= ttl, f'renewal {renewal_id} after {idle_s} s idle: remaining_ms {answer.remaining_ms} outside (0, {ttl}]')
                seen.append(answer.remaining_ms)
        finally:
            requests.put(None)
            stream.cancel()
        L.session.Close(pb.CloseSessionRequest(header=L.header(), session_id=session_id), timeout=CALL_TIMEOUT_S)
        return f'remaining_ms {seen} within (0, {ttl}], also after a checkpoint (4 s of a 6 s TTL unrenewed)'
    checks.run('session.keepalive remaining_ms within (0, ttl_ms]', keepalive)


if __name__ == '__main__':
    sys.exit(main())
