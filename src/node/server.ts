import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, protoPath as healthProtoPath } from 'grpc-health-check';
import { protoFile } from '../codec/protoPath';
import { LevelStorage } from '../storage/levelStorage';
import { capStreams, CONNECTION_CAPS, ConnectionLimits } from './api/connectionLimits';
import type { ApiError } from './api/errors';
import type { Caller, IdentifiableCall } from './auth/caller';
import { pipelineService } from './api/pipelineService';
import { CLIENT_SERVER_OPTIONS } from './api/serverOptions';
import { answerPipelineCall, strictDeserializer, strictService } from './api/strictService';
import type { NodeConfig } from './config';
import { isLoopback } from './memberAddress';
import { createLogger, type Logger } from './logger';
import { MetricsListener } from './metrics/metricsListener';
import { NodeMetrics } from './metrics/nodeMetrics';
import type { RaftDriver } from './raftDriver';
import { NodeRuntime } from './runtime/nodeRuntime';
import { realPorts } from './runtime/realPorts';
import { CertificateFiles } from './tls/certificateFiles';
import { clientServerCredentials } from './tls/credentials';
import { bind, shutdown } from './grpcListen';
import { openPeerListener, type PeerListener } from './peerListener';

const LOADER_OPTIONS: protoLoader.Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

/** The Prometheus listener, when configured (plain HTTP: docs/metrics.md says how to expose it). */
async function startMetrics(config: NodeConfig, metrics: NodeMetrics, logger: Logger): Promise<MetricsListener | undefined> {
  if (config.metricsListen === undefined) return undefined;
  const listener = await MetricsListener.start(config.metricsListen, metrics, logger);
  if (!isLoopback(config.metricsListen)) {
    logger.warn({ metricsListen: config.metricsListen }, 'metrics are served over plain HTTP off loopback: firewall the port to your scraper (docs/metrics.md)');
  }
  return listener;
}

/** Running without auth is allowed when the config says so (development), but never quiet. */
function warnIfAuthOff(config: NodeConfig, logger: Logger): void {
  if (config.auth.enabled) return;
  logger.warn(
    { listen: config.listen, auth: config.auth },
    'AUTH IS OFF: any caller that reaches the client listener may take, release and write any lock and key (unless the replicated state has auth on already). Set "auth": { "enabled": true, "admin": NAME } in every node\'s config (docs/auth.md "Bootstrap")',
  );
}

/**
 * One fencelock node: the NodeRuntime (Raft, the lock state machine, leader duties, the API's answers) on
 * real time, LevelDB and gRPC, with the public API on the client listener and the Raft peer service on a
 * listener of its own (see docs/security.md).
 */
export class FenceLockServer {
  private constructor(
    readonly config: NodeConfig,
    readonly logger: Logger,
    private readonly server: grpc.Server,
    private readonly peer: PeerListener,
    private readonly certificates: CertificateFiles | null,
    private readonly storage: LevelStorage,
    readonly runtime: NodeRuntime,
    private readonly metricsListener: MetricsListener | undefined,
  ) {}

  get driver(): RaftDriver<import('../state').CommandResult> {
    return this.runtime.driver;
  }

  static async start(config: NodeConfig, logger = createLogger(config.id, config.logLevel)): Promise<FenceLockServer> {
    const certificates = config.tls ? new CertificateFiles(config.tls) : null;
    const storage = await LevelStorage.open(config.dataDir);
    const server = new grpc.Server(CLIENT_SERVER_OPTIONS);
    const ports = realPorts();
    const peer = openPeerListener(config, certificates, logger.child({ part: 'transport' }), ports.timers);
    const transport = peer.transport;

    const metrics = new NodeMetrics(config.id, () => ports.clock.monotonicMs(), true, config.metricsLockLabelDepth);
    const runtime = await NodeRuntime.start({ config, storage, transport, ports, logger, metrics });
    const health = new HealthImplementation({ '': 'SERVING', 'fencelock.v1.Lock': 'NOT_SERVING' });

    const pkgDef = protoLoader.loadSync([protoFile('fencelock/v1/lock.proto'), healthProtoPath], LOADER_OPTIONS);
    const pkg = grpc.loadPackageDefinition(pkgDef) as unknown as {
      fencelock: { v1: Record<string, { service: grpc.ServiceDefinition }> };
    };
    const v1 = pkg.fencelock.v1;
    const serviceOf = (name: string): grpc.ServiceDefinition => {
      const loaded = v1[name];
      if (!loaded) throw new Error(`fencelock/v1/lock.proto defines no service ${name}`);
      return loaded.service;
    };
    const { session, lock, kv, cluster } = runtime.services;
    // Long-lived streams and Pipeline calls are counted per connection, so that no client crowds out the others.
    const access = runtime.context.access;
    const limits = new ConnectionLimits(CONNECTION_CAPS, (identity, quota) => runtime.app.machine.auth.quotaOf(identity, quota));
    const identify = (call: IdentifiableCall): Caller => access.callerOf(call);
    const pipeline = pipelineService(logger, { ...lock.calls, ...kv.calls }, {
      limits,
      identify,
      metrics: metrics.api,
      watchRights: (caller, onLost) => runtime.context.rights.watch(caller, onLost),
      timers: ports.timers,
      decodeCall: strictDeserializer(serviceOf('Pipeline').Calls as grpc.MethodDefinition<unknown, unknown>),
    });
    const refusedIn = (service: string) => (method: string, err: ApiError): void => metrics.api.refused(`${service}.${method}`, err);
    server.addService(...strictService(serviceOf('Session'), capStreams(session.service, { KeepAlive: 'KeepAlive streams' }, limits, identify, refusedIn('Session'))));
    server.addService(...strictService(serviceOf('Lock'), capStreams(lock.service, { Watch: 'Watch streams' }, limits, identify, refusedIn('Lock'))));
    server.addService(...strictService(serviceOf('KV'), kv.service));
    server.addService(...strictService(serviceOf('Pipeline'), capStreams(pipeline, { Calls: 'Pipeline streams' }, limits, identify, refusedIn('Pipeline')), { answerOnStream: answerPipelineCall }));
    server.addService(...strictService(serviceOf('Cluster'), cluster));
    server.addService(...strictService(serviceOf('Auth'), runtime.services.auth));
    health.addToServer(server);
    new ReflectionService(pkgDef).addToServer(server);

    await peer.listen();
    await bind(server, config.listen, clientServerCredentials(certificates, config.clientCertAuth));
    // Listening now: tell the peers we are up, so that a leader backing off from this node redials at once.
    transport.connectAll();
    const metricsListener = await startMetrics(config, metrics, logger);
    const node = new FenceLockServer(config, logger, server, peer, certificates, storage, runtime, metricsListener);
    runtime.driver.on('role', () => health.setStatus('fencelock.v1.Lock', runtime.driver.leaderId() ? 'SERVING' : 'NOT_SERVING'));
    logger.info({ listen: config.listen, peerListen: config.peerListen, metricsListen: config.metricsListen, tls: certificates !== null, clientCertAuth: config.clientCertAuth,
      clusterId: config.clusterId, members: config.members, dataDir: config.dataDir }, 'fencelock node started');
    warnIfAuthOff(config, logger);
    return node;
  }

  /**
   * Called once if a member answers this node's peer stream that its committed configuration removed this
   * node: the way a node removed while it was down or cut off learns of it (it never sees the commit).
   */
  onRemovedByMember(handler: (by: string) => void): void {
    this.peer.transport.onRemoved(handler);
  }

  /** Rereads the TLS files (SIGHUP): new connections get the new certificates; a bad file keeps the old ones. */
  reloadCertificates(): void {
    if (!this.certificates) return;
    try {
      this.certificates.reload();
      this.peer.refreshCredentials();
      this.logger.info(this.certificates.files, 'TLS certificates reloaded');
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'TLS certificate reload failed; still using the previous certificates');
    }
  }

  /** Graceful stop: leadership handed over, in-flight batch flushed, LevelDB closed. */
  async stop(): Promise<void> {
    await this.runtime.stop();
    // Peer streams end with OK before the peer server goes (else it cancels them after its grace): the
    // peers then log a stop, not a broken link.
    await Promise.all([this.peer.close(), shutdown(this.server, this.runtime.context.ports.timers), this.metricsListener?.close()]);
    await this.storage.close();
    this.logger.info('fencelock node stopped');
  }
}
