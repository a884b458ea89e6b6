import type { Logger } from 'pino';
import { jobChain, type JobConfig } from '../config/job-schema.ts';
import { unverifiableChainReason } from '../eth/chain-rules.ts';
import type { CheckedHeader } from '../source/header-check.ts';
import { UnverifiableChainError, UnverifiedHeaderError } from './errors.ts';

/** What of a job decides how its headers are checked and kept. */
export type HeaderPolicyJob = Pick<JobConfig, 'name' | 'chain'> & Partial<Pick<JobConfig, 'verifyHeaders'>>;

/** A checked header, with the block the transfers named. */
export interface AdmittedHeader {
  block: { number: number; hash: string; contracts?: readonly string[] };
  checked: CheckedHeader;
}

/**
 * How one run (or one queued task) keeps the headers it fetches: each is checked by the hash rule of the job's
 * chain, and one the rule cannot verify is stored unverified, said once, or fails the run under
 * `"verifyHeaders": "require"`.
 */
export interface HeaderPolicy {
  /** The job's chain: its headers are checked by its hash rule (`chain-rules.ts`). */
  readonly chain: number;
  /**
   * Called with checked headers before they are stored. Under `"require"`, the first that is not verified throws an
   * UnverifiedHeaderError naming its block, its chain, why, and what to do. Otherwise the first unverified header of
   * the run is logged (`headers stored unverified`, with the job, chain, reason and block), and no later one is.
   */
  admit(headers: readonly AdmittedHeader[]): void;
}

/**
 * The header policy of one run of `job` (make one per run: it remembers that it warned).
 *
 * @example
 * const headers = createHeaderPolicy({ name: 'zk', chain: 324, verifyHeaders: 'allow-unverified' }, logger);
 * headers.admit(checked); // logs 'headers stored unverified' once, with the reason; later calls log nothing
 */
export function createHeaderPolicy(job: HeaderPolicyJob, logger: Pick<Logger, 'warn'>): HeaderPolicy {
  const { chain } = jobChain(job);
  const required = job.verifyHeaders === 'require';
  let warned = false;
  return {
    chain,
    admit(headers) {
      if (warned && !required) return;
      const first = headers.find((h) => !h.checked.hashVerified);
      if (!first) return;
      const { block } = first;
      const reason = first.checked.unverifiedReason ?? 'its hash was not verified';
      if (required) throw new UnverifiedHeaderError({ job: job.name, chain, block: block.number, hash: block.hash, contracts: block.contracts, reason });
      warned = true;
      logger.warn({
        msg: 'headers stored unverified',
        job: job.name,
        chain,
        reason,
        block: block.number,
        hash: block.hash,
        note: 'block_headers.hash_verified is false for each such header of this run (said once per run); set "verifyHeaders": "require" in the job file to fail the run instead',
      });
    },
  };
}

/**
 * Before a run or an enqueue writes anything: a job that sets `"verifyHeaders": "require"` for a chain whose hash
 * rule this exporter does not know could store none of its headers, so it is refused (UnverifiableChainError, exit 2).
 *
 * @example requireVerifiableChain({ name: 'zk', chain: 324, verifyHeaders: 'require' }) // → throws: no header of chain 324 can be verified: zkSync Era …
 */
export function requireVerifiableChain(job: HeaderPolicyJob): void {
  if (job.verifyHeaders !== 'require') return;
  const { chain } = jobChain(job);
  const reason = unverifiableChainReason(chain);
  if (reason !== undefined) throw new UnverifiableChainError(job.name, chain, reason);
}
