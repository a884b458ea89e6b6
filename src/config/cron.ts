/**
 * The `schedule` of a job file: a five-field cron expression in UTC, in the grammar graphile-worker's
 * crontab reads (numbers, `a-b` ranges, `*` and `*\/n`, comma lists; no names, no `?`, `L` or `#`).
 * Checked here, without loading graphile-worker, so a bad schedule is reported with the file's other problems.
 */
const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  // 7 is Sunday again, as in crontab(5)
  { name: 'day of week', min: 0, max: 7 },
] as const;

export const CRON_EXPECTED = 'expected a cron schedule in UTC: minute hour day-of-month month day-of-week, e.g. "0 2 * * *" (every day at 02:00)';

/**
 * What is wrong with a cron expression, or undefined when graphile-worker's crontab accepts it.
 *
 * @example cronProblem('0 2 * * *') // → undefined
 * @example cronProblem('0 24 * * *') // → 'hour: 24 is out of range 0–23'
 */
export function cronProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== FIELDS.length || fields[0] === '') return `${fields[0] === '' ? 'no' : fields.length} field(s) where 5 were expected`;
  for (const [i, field] of fields.entries()) {
    const { name, min, max } = FIELDS[i]!;
    for (const part of field.split(',')) {
      const problem = partProblem(part, min, max);
      if (problem) return `${name}: ${problem}`;
    }
  }
  return undefined;
}

function partProblem(part: string, min: number, max: number): string | undefined {
  const inRange = (n: number) => (n < min || n > max ? `${n} is out of range ${min}–${max}` : undefined);
  if (/^\d+$/.test(part)) return inRange(Number(part));
  const range = /^(\d+)-(\d+)$/.exec(part);
  if (range) {
    const [a, b] = [Number(range[1]), Number(range[2])];
    return inRange(a) ?? inRange(b) ?? (b <= a ? `range ${part} must go upwards` : undefined);
  }
  const wildcard = /^\*(?:\/(\d+))?$/.exec(part);
  if (wildcard) return wildcard[1] !== undefined && Number(wildcard[1]) < 1 ? `step ${part} must be at least 1` : undefined;
  return `"${part}" is not a number, a range a-b, * or */n`;
}
