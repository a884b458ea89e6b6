import pRetry from 'p-retry';
import type { Clock } from './clock.ts';
import { FatalError, isRetryable, type EtlError } from './errors.ts';

/** The longest wait a `Retry-After` may impose before it is cut to this. */
export const MAX_RETRY_AFTER_MS = 60_000;

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
  onRetry?: (err: EtlError, attempt: number, delayMs: number) => void;
  /** Stops the retries: an abort during a wait ends them with the signal's reason. */
  signal?: AbortSignal;
}

/** Every attempt failed with a retryable error; `lastError` is the last of them. Fatal: the retries are spent. */
export class RetriesExhaustedError extends FatalError {
  constructor(
    readonly attempts: number,
    readonly lastError: EtlError,
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
export function retryDelayMs(attempt: number, options: Pick<RetryOptions, 'minDelayMs' | 'maxDelayMs'>, random: number, retryAfterMs?: number): number {
  const min = Math.max(0, options.minDelayMs);
  const cap = Math.max(min, Math.min(options.maxDelayMs, min * 2 ** Math.min(attempt - 1, 30)));
  const backoff = Math.round(min + random * (cap - min));
  return retryAfterMs === undefined ? backoff : Math.max(backoff, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/**
 * The one retry policy, for HTTP, JSON-RPC and PostgreSQL alike (p-retry): runs `fn` until it succeeds,
 * retrying an error that says a retry can help (`isRetryable`) and rethrowing anything else at once. After
 * the last attempt it throws `RetriesExhaustedError`, whose message says how many attempts were made.
 * The waits are this policy's, not p-retry's: jittered exponential backoff that honours a `Retry-After`,
 * slept on `clock`, so tests drive it with `manualClock()`.
 *
 * @example
 * await withRetry((attempt) => http.get(url), { retries: 5, minDelayMs: 250, maxDelayMs: 10_000, clock: systemClock })
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const random = options.random ?? Math.random;
  try {
    return await pRetry(fn, {
      retries: options.retries,
      // p-retry's own timer stays at 0: the wait happens in onFailedAttempt, on the injected clock
      minTimeout: 0,
      maxTimeout: 0,
      ...(options.signal && { signal: options.signal }),
      shouldRetry: ({ error }) => isRetryable(error),
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
        if (!isRetryable(error) || retriesLeft <= 0) return;
        const delayMs = retryDelayMs(attemptNumber, options, random(), error.retryAfterMs);
        options.onRetry?.(error, attemptNumber, delayMs);
        // an abort ends the wait at once (its timer too): p-retry then throws its reason
        await options.clock.sleep(delayMs, options.signal);
      },
    });
  } catch (err) {
    if (isRetryable(err)) throw new RetriesExhaustedError(options.retries + 1, err);
    throw err;
  }
}
