import type { EventEmitter } from 'node:events';
import { loadConfig } from './config';
import { createLogger, type LogContext, type Logger } from './logger';
import { FenceLockServer } from './server';
import { startTracing } from '../tracing/start';

/** The process exit status after a fatal stop: supervisors (systemd Restart=on-failure, containers) must see a failure. */
export const FATAL_EXIT_CODE = 70; // EX_SOFTWARE

/**
 * Runs one node until SIGTERM or SIGINT, then shuts it down gracefully. Resolves once it has stopped, with
 * the exit status the process should end with: 0 after a signal, FATAL_EXIT_CODE after a fatal error.
 */
export async function serve(configPath: string, overrides: { join?: boolean } = {}): Promise<number> {
  const config = loadConfig(configPath, overrides);
  // Every file the node writes (log, snapshots) is readable by its own user only: the log holds session ids.
  process.umask(0o077);
  const logContext: { current?: LogContext } = {};
  const logger = createLogger(config.id, config.logLevel, logContext);
  const { tracing: traced } = config;
  const tracing = traced === undefined ? undefined : startTracing({ otlpEndpoint: traced.otlpEndpoint, serviceName: traced.serviceName ?? `fencelock-${config.id}`, sampleRatio: traced.sampleRatio });
  const node = await FenceLockServer.start(config, logger);
  logContext.current = { term: () => node.driver.currentTerm(), role: () => node.driver.currentRole() };
  process.on('SIGHUP', () => node.reloadCertificates());
  const code = await runUntilStopped(node, logger, process);
  // The last spans (the shutdown's own calls) go out before the process ends; a collector away costs no exit.
  await tracing?.shutdown().catch((err: unknown) => logger.warn({ err }, 'tracing: the last spans could not be sent'));
  return code;
}

/** What runUntilStopped needs of a node: its driver's 'fatal' event and a graceful stop. */
export interface StoppableNode {
  driver: Pick<EventEmitter, 'once'>;
  onRemovedByMember(handler: (by: string) => void): void;
  stop(): Promise<void>;
}

/** Waits for SIGTERM, SIGINT or a fatal error, stops the node, and returns the exit status. */
export async function runUntilStopped(node: StoppableNode, logger: Logger, signals: Pick<EventEmitter, 'once'>): Promise<number> {
  let fatal: Error | undefined;
  await new Promise<void>((resolve) => {
    let stopping = false;
    const onSignal = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      node.stop().then(resolve, (err) => {
        logger.error({ err }, 'error during shutdown');
        resolve();
      });
    };
    signals.once('SIGTERM', () => onSignal('SIGTERM'));
    signals.once('SIGINT', () => onSignal('SIGINT'));
    node.driver.once('removed', (index: number) => {
      logger.warn({ index }, 'this node was removed from the cluster; stopping (its data folder can be deleted)');
      onSignal('removed');
    });
    node.onRemovedByMember((by) => {
      logger.warn({ by }, `member ${by} says this node was removed from the cluster while it was away; stopping (its data folder can be deleted)`);
      onSignal('removed');
    });
    node.driver.once('fatal', (err: Error) => {
      fatal = err;
      onSignal('fatal');
    });
  });
  // The reason is the last line a supervisor's log shows.
  if (fatal) logger.fatal({ err: fatal.message, exitCode: FATAL_EXIT_CODE }, 'stopped after a fatal error');
  logger.flush();
  return fatal ? FATAL_EXIT_CODE : 0;
}
