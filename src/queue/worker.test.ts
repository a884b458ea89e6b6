import { describe, expect, it } from 'vitest';
import { FatalError, RetryableError } from '../common/errors.ts';
import { ChunkMovedError } from '../warehouse/load-page.ts';
import { CommitUnknownError } from '../warehouse/page-writer.ts';
import { systemClock } from '../common/clock.ts';
import { RetriesExhaustedError, withRetry } from '../common/retry.ts';
import { retryStatement } from '../warehouse/statement-retry.ts';
import { taskTriedAgain } from './worker.ts';
import { chainOfTask, chainTasks } from './payloads.ts';

describe('a failed task', () => {
  it('is tried again when retrying can help, when its chunk was taken over, after a COMMIT nobody could tell about, or when its error is of no known kind', () => {
    expect(taskTriedAgain(new RetryableError('the API answered 503'))).toBe(true);
    expect(taskTriedAgain(new ChunkMovedError(['7']))).toBe(true);
    expect(taskTriedAgain(new CommitUnknownError(['7'], new Error('Connection terminated unexpectedly')))).toBe(true);
    expect(taskTriedAgain(new TypeError('a bug'))).toBe(true);
  });

  it('ends when retrying cannot help: bad data, bad configuration', () => {
    expect(taskTriedAgain(new FatalError('the API served a transfer twice'))).toBe(false);
  });

  it("goes back to the queue's backoff when PostgreSQL stayed away past a statement's retries, not when the API did", async () => {
    const clock = { ...systemClock, sleep: async () => undefined };
    const spent = (err: Error) => retryStatement(() => Promise.reject(err), { clock }).catch((e: unknown) => e);
    const restart = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    expect(taskTriedAgain(await spent(restart))).toBe(true);
    const api = await withRetry(() => Promise.reject(new RetryableError('POST http://node/<redacted>: ECONNREFUSED')), { retries: 2, minDelayMs: 0, maxDelayMs: 0, clock }).catch(
      (e: unknown) => e,
    );
    expect(api).toBeInstanceOf(RetriesExhaustedError);
    expect(taskTriedAgain(api)).toBe(false);
  });
});

describe('chainOfTask', () => {
  it('reads the chain of each task name chainTasks gives, and nothing of another name', () => {
    for (const chain of [1, 10, 8453]) {
      const tasks = chainTasks(chain);
      expect([chainOfTask(tasks.chunk), chainOfTask(tasks.enqueue)]).toEqual([chain, chain]);
    }
    expect(chainOfTask('erc20_etl_other')).toBeUndefined();
    expect(chainOfTask('erc20_etl_chunk_x')).toBeUndefined();
  });
});
