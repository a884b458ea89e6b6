// graphile-worker's crontab parser module alone: the package's entry point loads the whole worker (pg and all)
import { createCronMatcher } from 'graphile-worker/dist/cronMatcher.js';

/**
 * The `schedule` of a job file: a five-field cron expression in UTC, checked by the parser graphile-worker's
 * crontab uses (numbers, `a-b` ranges, `*` and `*\/n`, comma lists; no names, no `?`, `L` or `#`). Only that
 * parser's module is loaded, not the worker, so a bad schedule is reported with the file's other problems.
 */
const FIELD_NAMES = ['minute', 'hour', 'day of month', 'month', 'day of week'] as const;

export const CRON_EXPECTED = 'expected a cron schedule in UTC: minute hour day-of-month month day-of-week, e.g. "0 2 * * *" (every day at 02:00)';

/**
 * What is wrong with a cron expression, or undefined when graphile-worker's crontab accepts it (once trimmed).
 *
 * @example cronProblem('0 2 * * *') // → undefined
 * @example cronProblem('0 24 * * *') // → 'hour: 24 is out of range 0–23'
 */
export function cronProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== FIELD_NAMES.length || fields[0] === '') return `${fields[0] === '' ? 'no' : fields.length} field(s) where 5 were expected`;
  const problem = parserProblem(fields.join(' '));
  if (problem === undefined) return undefined;
  // The parser names no field when a character is outside its grammar: parse each part alone to find it.
  for (const [i, field] of fields.entries()) {
    for (const part of field.split(',')) {
      const alone = parserProblem(FIELD_NAMES.map((_, j) => (j === i ? part : '*')).join(' '));
      if (alone !== undefined) return `${FIELD_NAMES[i]}: ${reworded(part, alone)}`;
    }
  }
  return problem;
}

/** graphile-worker's message for a pattern it refuses, or undefined when it accepts it. */
function parserProblem(pattern: string): string | undefined {
  try {
    createCronMatcher(pattern, 'the schedule');
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** The parser's message about one part of a field, in this tool's words; as it is when not recognised. */
function reworded(part: string, message: string): string {
  const outOfRange = /^Too (?:large|small) value '(\d+)'.* range (\d+)-(\d+)\.?$/.exec(message);
  if (outOfRange) return `${outOfRange[1]} is out of range ${outOfRange[2]}–${outOfRange[3]}`;
  if (message.startsWith('Invalid range')) return `range ${part} must go upwards`;
  if (message.startsWith('Invalid wildcard')) return `step ${part} must be at least 1`;
  if (message.startsWith('Unsupported syntax') || message.startsWith('Invalid cron pattern')) return `"${part}" is not a number, a range a-b, * or */n`;
  return message;
}
