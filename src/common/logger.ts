import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import { chooseLogFormat, chooseLogLevel } from './log-format.ts';

export type { Logger };

/**
 * Where readable log lines go on a terminal: stderr, or, while progress bars are drawn there, above the bars
 * (the bars take them over with `divert`, so a log line never lands in the middle of a bar).
 */
export interface TerminalLines {
  write(text: string): void;
  /** Sends the lines to `to` from now on; `undefined` sends them to stderr again. */
  divert(to: ((text: string) => void) | undefined): void;
}

/** Lines to stderr until diverted. */
export function createTerminalLines(): TerminalLines {
  let sink: ((text: string) => void) | undefined;
  return {
    write: (text) => (sink ? sink(text) : process.stderr.write(text)),
    divert: (to) => {
      sink = to;
    },
  };
}

/**
 * Log lines on stderr (stdout is kept for what a command prints): readable text on a terminal, JSON lines
 * under cron, in pipes and in CI; `LOG_FORMAT=json|pretty` decides instead (see chooseLogFormat). Level from
 * `LOG_LEVEL`, default info. Readable lines go through `terminal` when given (progress bars divert them).
 * Anything that looks like a URL has its last path segment (the project id) redacted by the callers that log URLs.
 */
export function createLogger(options: { level?: string; name?: string; terminal?: TerminalLines } = {}): Logger {
  const isTTY = process.stderr.isTTY === true;
  const destination =
    chooseLogFormat({ isTTY, env: process.env }) === 'pretty' ? prettyLines(isTTY, options.terminal ?? createTerminalLines()) : pino.destination({ fd: 2, sync: true });
  return pino({ level: options.level ?? chooseLogLevel(process.env, 'info'), base: { name: options.name ?? 'erc20-etl' } }, destination);
}

/**
 * pino-pretty's formatter, called synchronously in this thread for each line, writing to `terminal`; loaded
 * only when chosen, so JSON runs never pay for it.
 */
function prettyLines(isTTY: boolean, terminal: TerminalLines): DestinationStream {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  const pretty = prettyFactory({ colorize: isTTY && !process.env['NO_COLOR'], translateTime: 'SYS:HH:MM:ss.l' });
  return { write: (line: string) => terminal.write(pretty(line)) };
}
