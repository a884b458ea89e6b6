import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../common/errors.ts';
import type { JobConfig } from '../config/job-schema.ts';
import { loadJobFile, RPC_TIMEOUT_SECONDS, rpcTimeoutMs } from '../config/load-job.ts';

/** The flags of `erc20-etl worker`, as commander hands them over. */
export interface WorkerFlags {
  concurrency?: string;
  once?: boolean;
  schedule?: boolean;
  jobs?: string;
  deadAfter?: string;
  rpcTimeout?: string;
}

export interface WorkerSettings {
  concurrency: number;
  once: boolean;
  leaseSeconds: number;
  scheduled: Readonly<JobConfig>[];
  /** A node job's deadline for one JSON-RPC answer (`--rpc-timeout`); builder jobs do not use it. */
  rpcTimeoutMs: number;
}

const integer = (value: string | undefined, fallback: number, min: number, max: number, flag: string, problems: string[]): number => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (/^\d+$/.test(value) && n >= min && n <= max) return n;
  problems.push(`${flag}: expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return fallback;
};

/**
 * Reads the worker's flags, and with `--schedule` the job files of `--jobs` (every `*.json` but
 * `*.schema.json`) that carry a schedule. Every problem is reported at once.
 */
export async function workerSettings(flags: WorkerFlags): Promise<WorkerSettings> {
  const problems: string[] = [];
  const concurrency = integer(flags.concurrency, 4, 1, 64, '--concurrency', problems);
  const leaseSeconds = integer(flags.deadAfter, 60, 5, 86_400, '--dead-after', problems);
  let timeoutMs: number = RPC_TIMEOUT_SECONDS.default * 1000;
  try {
    timeoutMs = rpcTimeoutMs(flags);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(err.message.replace(/\.$/, ''));
  }
  if (flags.jobs !== undefined && !flags.schedule) {
    problems.push(`--jobs ${flags.jobs}: read only with --schedule (the job files whose "schedule" the worker fires); add --schedule, or leave --jobs out`);
  }
  if (flags.once && flags.schedule) problems.push('--once and --schedule: a worker that stops when the queue is empty cannot keep a schedule; use one or the other');
  let scheduled: Readonly<JobConfig>[] = [];
  if (flags.schedule && !flags.once) scheduled = await scheduledJobs(flags.jobs ?? 'jobs', problems);
  if (problems.length)
    throw new ConfigError(`Cannot start the worker (${problems.length} problem(s)):`, problems, 'Fix them and start it again; `erc20-etl worker --help` lists the flags.');
  return { concurrency, once: Boolean(flags.once), leaseSeconds, scheduled, rpcTimeoutMs: timeoutMs };
}

async function scheduledJobs(dir: string, problems: string[]): Promise<Readonly<JobConfig>[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.endsWith('.schema.json')).sort();
  } catch (err) {
    problems.push(`--jobs ${dir}: cannot read the directory (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    return [];
  }
  const jobs: Readonly<JobConfig>[] = [];
  const files = new Map<string, string>();
  for (const name of names) {
    const file = join(dir, name);
    try {
      const job = await loadJobFile(file);
      if (job.schedule === undefined) continue;
      const other = files.get(job.name);
      if (other) problems.push(`${file}: job name "${job.name}" is also the name of ${other}; expected each scheduled job's name once`);
      files.set(job.name, file);
      jobs.push(job);
    } catch (err) {
      // one entry a problem, so the count in the heading is the number of lines below it
      if (err instanceof ConfigError && err.problems.length) problems.push(...err.problems);
      else problems.push((err as Error).message);
    }
  }
  if (!jobs.length && !problems.length) problems.push(`--schedule: no job file in ${dir} has a "schedule", e.g. "schedule": "0 2 * * *"`);
  return jobs;
}
