import { ConfigError } from './errors.ts';

/** How log lines are written: JSON lines for machines (cron, pipes, CI), or readable text for a person. */
export type LogFormat = 'json' | 'pretty';

const FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/**
 * `LOG_FORMAT` when it is set; otherwise readable text on a terminal and JSON lines anywhere else
 * (stderr redirected to a file or a pipe, or `CI=true` even with a terminal).
 *
 * @example chooseLogFormat({ isTTY: true, env: {} }) // 'pretty'
 * @example chooseLogFormat({ isTTY: true, env: { LOG_FORMAT: 'json' } }) // 'json'
 */
export function chooseLogFormat(input: { isTTY: boolean; env: NodeJS.ProcessEnv }): LogFormat {
  const chosen = input.env['LOG_FORMAT'];
  if (chosen !== undefined && chosen !== '') {
    const format = FORMATS.find((f) => f === chosen.trim().toLowerCase());
    if (!format) {
      throw new ConfigError(`LOG_FORMAT is "${chosen}": expected json (JSON lines) or pretty (readable text), or leave it unset for text on a terminal and JSON lines otherwise.`);
    }
    return format;
  }
  return input.isTTY && input.env['CI'] !== 'true' ? 'pretty' : 'json';
}
