import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, protoPath as healthProtoPath } from 'grpc-health-check';
import { protoFile } from '../codec/protoPath';
import { RAFT_DEFAULTS } from '../raft/config';
import { Role } from '../raft/types';
import { LevelStorage } from '../storage/levelStorage';
import { GrpcPeerTransport, PEER_SERVER_OPTIONS } from '../transport';
import { clusterService } from './api/clusterService';
import { NodeContext, type Handler } from './api/context';
import { kvService } from './api/kvService';
import { lockService } from './api/lockService';
import { pipelineService, type PipelineCall } from './api/pipelineService';
import { sessionService } from './api/sessionService';
import { CLIENT_SERVER_OPTIONS } from './api/serverOptions';
import { answerPipelineCall, strictService } from './api/strictService';
import type { NodeConfig } from './config';
import { LockApp } from './lockApp';
import { createLogger, type Logger } from './logger';
import { RaftDriver } from './raftDriver';
import { SessionLeases } from './sessionLeases';
import { CertificateFiles } from './tls/certificateFiles';
import { clientServerCredentials, peerChannelCredentials, peerServerCredentials } from './tls/credentials';
import { randomBytes } from 'node:crypto';

const LOADER_OPTIONS: protoLoader.Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

/** Cryptographic jitter for elections: unpredictable in production, while the simulator injects a seed. */
function secureRandom(): number {
  return randomBytes(4).readUInt32BE(0) / 2 ** 32;
}

/** Binds a server to one address, resolving when it listens. */
function bind(server: grpc.Server, address: string, credentials: grpc.ServerCredentials): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    server.bindAsync(address, credentials, (err) => (err ? reject(new Error(`cannot listen on ${address}: ${err.message}`)) : resolve())),
  );
}

/** Stops a server: in-flight calls get a second to finish, then it is forced. */
function shutdown(server: grpc.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, 1_000);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * One fencelock node: the Raft driver, the lock state machine, the public API on the client listener and
 * the Raft peer service on a listener of its own (see docs/security.md).
 */
export class FenceLockServer {
  private sweeper: NodeJS.Timeout | undefined;

  private constructor(
    readonly config: NodeConfig,
    readonly logger: Logger,
    private readonly server: grpc.Server,
    private readonly peerServer: grpc.Server,
    private readonly certificates: CertificateFiles | null,
    private readonly storage: LevelStorage,
    private readonly transport: GrpcPeerTransport,
    readonly driver: RaftDriver<import('../state').CommandResult>,
    readonly context: NodeContext,
    private readonly health: HealthImplementation,
  ) {}

  static async start(config: NodeConfig, logger = createLogger(config.id, config.logLevel)): Promise<FenceLockServer> {
    const certificates = config.tls ? new CertificateFiles(config.tls) : null;
    const storage = await LevelStorage.open(config.dataDir);
    const server = new grpc.Server(CLIENT_SERVER_OPTIONS);
    const peerServer = new grpc.Server(PEER_SERVER_OPTIONS);
    const peers = Object.fromEntries(Object.entries(config.members).map(([id, m]) => [id, m.peer]));
    const transport = new GrpcPeerTransport({
      selfId: config.id,
      peers: { ...peers, ...config.peerAddresses },
      clusterId: config.clusterId,
      channelCredentials: (peer) => peerChannelCredentials(certificates, peer),
      authenticatePeers: certificates !== null,
      logger: logger.child({ part: 'transport' }),
    });
    transport.register(peerServer);

    const app = new LockApp();
    const leases = new SessionLeases(() => Date.now());
    const driver = await RaftDriver.start({
      raft: {
        id: config.id,
        voters: Object.keys(config.members).sort(),
        electionTicks: config.electionTicks,
        heartbeatTicks: config.heartbeatTicks,
        random: secureRandom,
        ...RAFT_DEFAULTS,
        lazyCommitNotice: true,
      },
      storage,
      transport,
      app,
      tickMs: config.tickMs,
      snapshotEveryEntries: config.snapshotEveryEntries,
      logger,
    });
    const ctx = new NodeContext(config, driver, app, leases, logger);
    const health = new HealthImplementation({ '': 'SERVING', 'fencelock.v1.Lock': 'NOT_SERVING' });

    const pkgDef = protoLoader.loadSync([protoFile('fencelock/v1/lock.proto'), healthProtoPath], LOADER_OPTIONS);
    const pkg = grpc.loadPackageDefinition(pkgDef) as unknown as {
      fencelock: { v1: Record<string, { service: grpc.ServiceDefinition }> };
    };
    const v1 = pkg.fencelock.v1;
    server.addService(...strictService(v1.Session.service, sessionService(ctx)));
    const lock = lockService(ctx);
    const kv = kvService(ctx);
    server.addService(...strictService(v1.Lock.service, lock.service));
    server.addService(...strictService(v1.KV.service, kv.service));
    server.addService(...strictService(v1.Pipeline.service, pipelineService(logger, { ...lock.calls, ...kv.calls } as Record<PipelineCall, Handler<unknown, object>>), { answerOnStream: answerPipelineCall }));
    server.addService(...strictService(v1.Cluster.service, clusterService(ctx)));
    health.addToServer(server);
    new ReflectionService(pkgDef).addToServer(server);

    await bind(peerServer, config.peerListen, peerServerCredentials(certificates));
    await bind(server, config.listen, clientServerCredentials(certificates, config.clientCertAuth));
    const node = new FenceLockServer(config, logger, server, peerServer, certificates, storage, transport, driver, ctx, health);
    node.wireLeaderDuties(app, leases);
    logger.info({ listen: config.listen, peerListen: config.peerListen, tls: certificates !== null, clientCertAuth: config.clientCertAuth,
      clusterId: config.clusterId, members: config.members, dataDir: config.dataDir }, 'fencelock node started');
    return node;
  }

  /** Session deadlines follow leadership; expired sessions are proposed as Expire entries. */
  private wireLeaderDuties(app: LockApp, leases: SessionLeases): void {
    const { driver, context: ctx, logger } = this;
    driver.on('role', (role: Role) => {
      if (role === Role.Leader) {
        const sessions = app.machine.sessionIds().map((id) => ({ id, ttlMs: app.machine.getSession(id)!.ttlMs }));
        leases.resetAll(sessions);
        logger.info({ sessions: sessions.length }, 'leader: every session deadline starts afresh');
      } else {
        leases.clear();
      }
      this.health.setStatus('fencelock.v1.Lock', driver.leaderId() ? 'SERVING' : 'NOT_SERVING');
    });
    app.on('applied', (_index: number, _command: unknown, outcome: import('../state').CommandResult) => {
      if (!driver.isLeader() || outcome.duplicate) return;
      const r = outcome.result;
      if (r.status === 'session_opened') leases.opened(r.sessionId, r.ttlMs);
      for (const e of outcome.events) if (e.type === 'session_ended') leases.ended(e.sessionId);
    });
    this.sweeper = setInterval(() => {
      if (!driver.isLeader()) return;
      for (const sessionId of leases.expired()) {
        logger.info({ session: sessionId.slice(0, 8) }, 'session deadline passed; proposing expiry');
        ctx.propose({ type: 'ExpireSession', now: ctx.now(), sessionId }).catch((err) => {
          leases.retryExpire(sessionId);
          logger.warn({ err: (err as Error).message }, 'expiry proposal failed; will retry');
        });
      }
    }, this.config.tickMs);
  }

  /** Rereads the TLS files (SIGHUP): new connections get the new certificates; a bad file keeps the old ones. */
  reloadCertificates(): void {
    if (!this.certificates) return;
    try {
      this.certificates.reload();
      this.logger.info(this.certificates.files, 'TLS certificates reloaded');
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'TLS certificate reload failed; still using the previous certificates');
    }
  }

  /** Graceful stop: leadership handed over, in-flight batch flushed, LevelDB closed. */
  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.context.runStopHooks();
    await this.driver.stop();
    await Promise.all([shutdown(this.server), shutdown(this.peerServer)]);
    await this.transport.close();
    await this.storage.close();
    this.logger.info('fencelock node stopped');
  }
}
