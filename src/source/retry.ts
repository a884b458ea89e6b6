import type { Clock } from '../common/clock.ts';
import { FatalError, RetryableError } from '../common/errors.ts';
import { MAX_RETRY_AFTER_MS } from './errors.ts';

export interface RetryOptions {
  /** Retries after the first attempt: at most `retries + 1` attempts. */
  retries: number;
  /** The first backoff, and the least any backoff waits. */
  minDelayMs: number;
  /** Backoffs grow up to this; a `Retry-After` may wait longer (up to `MAX_RETRY_AFTER_MS`). */
  maxDelayMs: number;
  clock: Clock;
  /** Uniform in [0, 1); `Math.random` by default. */
  random?: () => number;
  /** Called before each wait. */
  onRetry?: (err: RetryableError, attempt: number, delayMs: number) => void;
}

/** Every attempt failed with a retryable error; `lastError` is the last of them. Fatal: the retries are spent. */
export class RetriesExhaustedError extends FatalError {
  constructor(
    readonly attempts: number,
    readonly lastError: RetryableError,
  ) {
    super(`${lastError.message} (gave up after ${attempts} attempt${attempts === 1 ? '' : 's'})`, { cause: lastError });
  }
}

/**
 * How long to wait after failed attempt `attempt` (1-based): exponential backoff with jitter, uniform in
 * [minDelayMs, min(maxDelayMs, minDelayMs·2^(attempt−1))], and at least the error's `retryAfterMs`
 * (itself cut to `MAX_RETRY_AFTER_MS`).
 *
 * @example retryDelayMs(3, { minDelayMs: 100, maxDelayMs: 1000 }, 0.5) // → 250 (uniform in 100…400)
 */
export function retryDelayMs(
  attempt: number,
  options: Pick<RetryOptions, 'minDelayMs' | 'maxDelayMs'>,
  random: number,
  retryAfterMs?: number,
): number {
  const min = Math.max(0, options.minDelayMs);
  const cap = Math.max(min, Math.min(options.maxDelayMs, min * 2 ** Math.min(attempt - 1, 30)));
  const backoff = Math.round(min + random * (cap - min));
  return retryAfterMs === undefined ? backoff : Math.max(backoff, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/**
 * Runs `fn` until it succeeds, retrying a `RetryableError` and rethrowing anything else at once. After
 * the last attempt it throws `RetriesExhaustedError`, whose message says how many attempts were made.
 * Waits through `clock.sleep`, so tests can drive it with `manualClock()`.
 *
 * @example
 * await withRetry((attempt) => http.get(url), { retries: 5, minDelayMs: 250, maxDelayMs: 10_000, clock: systemClock })
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const random = options.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (!(err instanceof RetryableError)) throw err;
      if (attempt > options.retries) throw new RetriesExhaustedError(attempt, err);
      const delayMs = retryDelayMs(attempt, options, random(), err.retryAfterMs);
      options.onRetry?.(err, attempt, delayMs);
      await options.clock.sleep(delayMs);
    }
  }
}
