import { EtlError, FatalError } from '../common/errors.ts';

/** Another run of the same job holds its lock: exit code 75 (EX_TEMPFAIL), try again later. */
export class JobLockedError extends EtlError {
  override readonly exitCode = 75;
  constructor(job: string) {
    super(`Another run of job "${job}" is in progress (it holds the job's lock); this run did nothing. Try again when it has finished.`);
  }
}

/** The API's blocks and the warehouse disagree in a way a retry cannot fix. */
export class ChainDataError extends FatalError {}
