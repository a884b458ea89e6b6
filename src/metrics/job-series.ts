import { jobChain, type JobConfig } from '../config/job-schema.ts';

/**
 * Whose series a number belongs to: the job's name and its chain id (the `job` and `chain` labels), so jobs of
 * different chains never share a series, whatever their names. A module of its own, without prom-client: a run
 * without metrics names its series too, and need not load (and start) the metrics library for it.
 */
export interface JobSeries {
  job: string;
  chain: number;
}

/**
 * The series of a job: its name, and its chain (chain 1 when it names none, as a run takes it).
 *
 * @example jobSeries({ name: 'nightly', chain: 8453 }) // → { job: 'nightly', chain: 8453 }
 */
export function jobSeries(job: Pick<JobConfig, 'name' | 'chain'>): JobSeries {
  return { job: job.name, chain: jobChain(job).chain };
}
