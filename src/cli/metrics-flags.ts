import type { Command } from 'commander';
import type { Logger } from 'pino';
import { ConfigError } from '../common/errors.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';

/** `--metrics-port` and `--metrics-host`, as commander hands them to an action. */
export interface MetricsFlags {
  metricsPort?: string;
  metricsHost?: string;
}

export const withMetrics = (cmd: Command): Command =>
  cmd
    .option('--metrics-port <port>', 'serve Prometheus metrics at http://HOST:PORT/metrics while the command runs (0: any free port)')
    .option('--metrics-host <host>', 'address the metrics endpoint listens on', '127.0.0.1');

/** Checks the metrics flags before anything starts: a bad port is a usage error (exit 2). */
export function checkMetricsFlags(flags: MetricsFlags): void {
  metricsPort(flags);
}

/** The port asked for, or undefined when metrics are off; a bad value is a usage error (exit 2). */
function metricsPort(flags: MetricsFlags): number | undefined {
  if (flags.metricsPort === undefined) return undefined;
  const port = Number(flags.metricsPort);
  if (!/^\d+$/.test(flags.metricsPort) || port > 65_535) {
    throw new ConfigError(`--metrics-port: expected a port number from 0 to 65535, got ${JSON.stringify(flags.metricsPort)}.`);
  }
  return port;
}

/**
 * Runs `work` with fresh metrics served on the port asked for (or none), and stops serving when it ends.
 * A port that cannot be listened on stops the command before it starts.
 */
export async function withMetricsServed<T>(flags: MetricsFlags, logger: Logger, work: (metrics: RunMetrics | undefined) => Promise<T>): Promise<T> {
  const port = metricsPort(flags);
  if (port === undefined) return work(undefined);
  const [{ Registry }, { createRunMetrics }, { startMetricsServer }] = await Promise.all([
    import('prom-client'),
    import('../metrics/run-metrics.ts'),
    import('../metrics/metrics-server.ts'),
  ]);
  const registry = new Registry();
  const metrics = createRunMetrics(registry);
  const host = flags.metricsHost ?? '127.0.0.1';
  const server = await startMetricsServer({ registry, host, port }).catch((err: unknown) => {
    throw new ConfigError(`--metrics-port ${port}: cannot listen on ${host}:${port} (${(err as Error).message}). Choose another port, or 0 for any free one.`);
  });
  logger.info({ msg: 'serving metrics', url: server.url });
  try {
    return await work(metrics);
  } finally {
    await server.close();
  }
}
