import { FatalError, RetryableError } from '../common/errors.ts';

/**
 * Another run of the same job, or a worker reading its chunks, holds its lock: exit code 75 (EX_TEMPFAIL).
 * Retryable: once the other run has finished, the same run can go ahead (a queued task is tried again).
 */
export class JobLockedError extends RetryableError {
  override readonly exitCode = 75;
  constructor(job: string) {
    super(
      `Another run of job "${job}" is in progress, or \`erc20-etl worker\` processes are reading its queued chunks (either holds the job's lock); this did nothing. Try again when they have finished.`,
    );
  }
}

/** The API's blocks and the warehouse disagree in a way a retry cannot fix. */
export class ChainDataError extends FatalError {}
