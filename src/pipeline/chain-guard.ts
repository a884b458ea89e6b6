import type { Logger } from 'pino';
import { ConfigError } from '../common/errors.ts';
import { jobChain, type JobConfig } from '../config/job-schema.ts';
import type { Source } from '../source/source.ts';
import { otherChainOfJob } from '../warehouse/runs.ts';
import { requireVerifiableChain } from './header-policy.ts';

/** The endpoint serves another chain than the job's: nothing was written, and no lock is held. */
export class ChainMismatchError extends ConfigError {
  constructor(job: string, chain: number, served: bigint | number, stated: boolean, given: ChainGiven) {
    super(
      `The endpoint serves chain ${served} (its eth_chainId), but job "${job}" is for chain ${chain}${stated ? '' : given === 'flag' ? ' (no --chain was given, so chain 1 is assumed)' : ' (it names no "chain", so chain 1 is assumed)'}; nothing was written.`,
      [],
      `Point CHAIN_API_URL (--api-url) at an endpoint of chain ${chain}, or, if chain ${served} is the one you mean, ${given === 'flag' ? `pass --chain ${served}` : `set "chain": ${served} in the job file`}.`,
    );
  }
}

/** Where a job's chain is given: a job file's `"chain"`, or `backfill`'s `--chain` flag. */
export type ChainGiven = 'file' | 'flag';

/**
 * Asks the endpoint which chain it serves (`eth_chainId`) and compares it with the job's `chain` (chain 1 when the
 * job names none, with a warning naming the field). First, a job that requires verified headers
 * (`"verifyHeaders": "require"`) of a chain whose hash rule this exporter does not know is refused, without asking.
 * Reads nothing of the warehouse: a command asks it before it even migrates one. Resolves to the job's chain.
 *
 * @example await checkEndpointChain({ source, logger }, job) // → 8453, or ChainMismatchError / UnverifiableChainError (exit 2)
 */
export async function checkEndpointChain(deps: { source: Pick<Source, 'chainId'>; logger: Logger }, job: Readonly<JobConfig>, given: ChainGiven = 'file'): Promise<number> {
  requireVerifiableChain(job);
  const { chain, stated } = jobChain(job);
  if (!stated) {
    deps.logger.warn(
      given === 'flag'
        ? { msg: 'no --chain given, so chain 1 (Ethereum) is assumed: pass --chain 1 to say so', job: job.name, flag: '--chain' }
        : { msg: 'the job names no chain, so chain 1 (Ethereum) is assumed: add "chain": 1 to the job file', job: job.name, field: 'chain' },
    );
  }
  const served = await deps.source.chainId();
  if (BigInt(served) !== BigInt(chain)) throw new ChainMismatchError(job.name, chain, served, stated, given);
  return chain;
}

/** The job's name has runs of another chain in this warehouse: nothing was written. */
export class JobNameChainError extends ConfigError {
  constructor(job: string, chain: number, other: string) {
    super(
      `Job "${job}" has run on chain ${other} in this warehouse, and this one is for chain ${chain}; nothing was written.`,
      [],
      `A job's name is its identity (its lock, its ledger, where it resumes), so each chain's job needs a name of its own: rename this one, e.g. "${job}-${chain}".`,
    );
  }
}

/**
 * Refuses (JobNameChainError, exit 2) a job whose name has runs of another chain in the warehouse. Asked where the
 * job's turn is held (its lock, or its enqueue turn), so two first runs of one name take turns and the second is told.
 */
export async function checkJobNameChain(db: Parameters<typeof otherChainOfJob>[0], job: Readonly<JobConfig>, chain: number): Promise<void> {
  const other = await otherChainOfJob(db, job.name, chain);
  if (other !== undefined) throw new JobNameChainError(job.name, chain, other);
}
