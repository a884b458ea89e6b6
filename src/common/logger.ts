import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import { chooseLogFormat } from './log-format.ts';

export type { Logger };

/**
 * Log lines on stderr (stdout is kept for what a command prints): readable text on a terminal, JSON lines
 * under cron, in pipes and in CI; `LOG_FORMAT=json|pretty` decides instead (see chooseLogFormat). Level from
 * `LOG_LEVEL`, default info. Anything that looks like a URL has its last path segment (the project id)
 * redacted by the callers that log URLs.
 */
export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  const isTTY = process.stderr.isTTY === true;
  const destination = chooseLogFormat({ isTTY, env: process.env }) === 'pretty' ? prettyStderr(isTTY) : pino.destination({ fd: 2, sync: true });
  return pino({ level: options.level ?? process.env.LOG_LEVEL ?? 'info', base: { name: options.name ?? 'erc20-etl' } }, destination);
}

/** pino-pretty writing synchronously to fd 2, in this thread; loaded only when chosen, so JSON runs never pay for it. */
function prettyStderr(isTTY: boolean): DestinationStream {
  const build = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  return build({
    destination: 2,
    sync: true,
    colorize: isTTY && !process.env['NO_COLOR'],
    translateTime: 'SYS:HH:MM:ss.l',
  });
}
