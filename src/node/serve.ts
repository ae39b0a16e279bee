import { loadConfig } from './config';
import { createLogger, type LogContext } from './logger';
import { FenceLockServer } from './server';

/** Runs one node until SIGTERM or SIGINT, then shuts it down gracefully. Resolves once it has stopped. */
export async function serve(configPath: string): Promise<void> {
  const config = loadConfig(configPath);
  // Every file the node writes (log, snapshots) is readable by its own user only: the log holds session ids.
  process.umask(0o077);
  const logContext: { current?: LogContext } = {};
  const logger = createLogger(config.id, config.logLevel, logContext);
  const node = await FenceLockServer.start(config, logger);
  logContext.current = { term: () => node.driver.node.status().term, role: () => node.driver.currentRole() };
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
    process.on('SIGHUP', () => node.reloadCertificates());
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    node.driver.once('fatal', () => onSignal('fatal'));
  });
  logger.flush();
}
