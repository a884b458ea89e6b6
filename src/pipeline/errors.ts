import { ConfigError, FatalError, RetryableError } from '../common/errors.ts';

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

/** What an UnverifiedHeaderError names: the job, the block and its chain, and why its header cannot be verified. */
export interface UnverifiedHeaderFacts {
  job: string;
  chain: number;
  block: number;
  hash: string;
  /** The contracts whose transfers point at the block, when known. */
  contracts?: readonly string[] | undefined;
  reason: string;
}

/**
 * Under `"verifyHeaders": "require"`, a header its chain's hash rule cannot verify: the run stops, and the header is
 * not stored (the transfers' rows of committed pages stay; a later run fetches the header again).
 */
export class UnverifiedHeaderError extends FatalError {
  constructor(facts: UnverifiedHeaderFacts) {
    const { job, chain, block, hash, contracts, reason } = facts;
    const of = contracts?.length ? ` (transfers of ${contracts.join(', ')})` : '';
    super(
      `The header of block ${block} (${hash}) of chain ${chain}${of} cannot be verified: ${reason}. ` +
        `Job "${job}" sets "verifyHeaders": "require", so the run stops here and the header is not stored. ` +
        `To store such headers unverified (block_headers.hash_verified = false, with the reason), remove "verifyHeaders": "require" from the job file.`,
      { details: { job, chain, block, hash, reason } },
    );
  }
}

/**
 * Under `"verifyHeaders": "require"`, a chain whose block hash rule this exporter does not know: none of its headers
 * could be stored, so the run (or enqueue) stops before it writes anything. Exit code 2.
 */
export class UnverifiableChainError extends ConfigError {
  constructor(job: string, chain: number, reason: string) {
    super(
      `Job "${job}" sets "verifyHeaders": "require", but no header of chain ${chain} can be verified: ${reason}; nothing was written.`,
      [],
      `Remove "verifyHeaders": "require" from the job file to store chain ${chain}'s headers unverified (block_headers.hash_verified = false, with the reason).`,
    );
  }
}
