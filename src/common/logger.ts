import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON lines on stderr (stdout is kept for what a command prints). Level from `LOG_LEVEL`, default info.
 * Anything that looks like a URL has its last path segment (the project id) redacted by the callers that log URLs.
 */
export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino(
    { level: options.level ?? process.env.LOG_LEVEL ?? 'info', base: { name: options.name ?? 'erc20-etl' } },
    pino.destination({ fd: 2, sync: true }),
  );
}
