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

/** The levels pino knows, most to least severe, and `silent`. */
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * `LOG_LEVEL` when it is set (in any case, spaces around it ignored), else `fallback`; an empty one counts as unset,
 * as a cron line or an env file easily leaves it.
 *
 * @example chooseLogLevel({ LOG_LEVEL: 'DEBUG' }, 'info') // 'debug'
 * @example chooseLogLevel({}, 'warn') // 'warn'
 */
export function chooseLogLevel(env: NodeJS.ProcessEnv, fallback: string): string {
  const chosen = env['LOG_LEVEL'];
  if (chosen === undefined || chosen.trim() === '') return fallback;
  const level = LEVELS.find((l) => l === chosen.trim().toLowerCase());
  if (!level) throw new ConfigError(`LOG_LEVEL is "${chosen}": expected one of ${LEVELS.join(', ')}, or leave it unset for ${fallback}.`);
  return level;
}
