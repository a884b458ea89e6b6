import { describe, expect, it } from 'vitest';
import { manualClock } from './clock.ts';
import { FatalError, RetryableError } from './errors.ts';
import { MAX_RETRY_AFTER_MS, RetriesExhaustedError, retryDelayMs, withRetry } from './retry.ts';

/** Lets pending promise callbacks run (the attempt, then its sleep registration). */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(outcomes: (Error | string)[], retries = 5) {
  const clock = manualClock();
  const attempts: number[] = [];
  const delays: number[] = [];
  const result = withRetry(
    async (attempt) => {
      attempts.push(attempt);
      const next = outcomes[attempt - 1] ?? 'ok';
      if (next instanceof Error) throw next;
      return next;
    },
    { retries, minDelayMs: 100, maxDelayMs: 1000, clock, random: () => 0.5, onRetry: (_err, _attempt, delayMs) => delays.push(delayMs) },
  );
  result.catch(() => {});
  return { clock, attempts, delays, result };
}

describe('withRetry', () => {
  it('retries a RetryableError and then succeeds', async () => {
    const { clock, attempts, delays, result } = setup([new RetryableError('503'), new RetryableError('503')]);
    for (let i = 0; i < 5; i++) {
      await flush();
      clock.advance(1000);
    }
    await expect(result).resolves.toBe('ok');
    expect(attempts).toEqual([1, 2, 3]);
    expect(delays).toEqual([100, 150]);
  });

  it('rethrows a FatalError at once, without waiting', async () => {
    const fatal = new FatalError('401');
    const { attempts, delays, result } = setup([fatal]);
    await expect(result).rejects.toBe(fatal);
    expect(attempts).toEqual([1]);
    expect(delays).toEqual([]);
  });

  it('rethrows an error of no known class at once', async () => {
    const bug = new TypeError('x is undefined');
    const { attempts, result } = setup([bug]);
    await expect(result).rejects.toBe(bug);
    expect(attempts).toEqual([1]);
  });

  it('waits for the sleep before the next attempt, and at least retryAfterMs', async () => {
    const { clock, attempts, delays, result } = setup([new RetryableError('429', 5000)]);
    await flush();
    clock.advance(4999);
    await flush();
    expect(attempts).toEqual([1]);
    clock.advance(1);
    await expect(result).resolves.toBe('ok');
    expect(attempts).toEqual([1, 2]);
    expect(delays).toEqual([5000]);
  });

  it('gives up after retries + 1 attempts and says how many were made', async () => {
    const { clock, attempts, result } = setup(
      Array.from({ length: 10 }, (_, i) => new RetryableError(`timeout #${i + 1}`)),
      3,
    );
    for (let i = 0; i < 10; i++) {
      await flush();
      clock.advance(1000);
    }
    const err = await result.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    expect((err as RetriesExhaustedError).message).toBe('timeout #4 (gave up after 4 attempts)');
    expect((err as RetriesExhaustedError).lastError.message).toBe('timeout #4');
    expect((err as RetriesExhaustedError).attempts).toBe(4);
    expect(attempts).toEqual([1, 2, 3, 4]);
  });

  it('ends a wait when its signal aborts, with the reason, and makes no attempt after it', async () => {
    const clock = manualClock();
    const stop = new AbortController();
    const attempts: number[] = [];
    const result = withRetry(
      async (attempt) => {
        attempts.push(attempt);
        throw new RetryableError('503');
      },
      { retries: 5, minDelayMs: 10_000, maxDelayMs: 10_000, clock, signal: stop.signal },
    );
    await flush();
    const reason = new Error('stopped by SIGINT');
    stop.abort(reason);
    // the clock never moves: the wait ends with the abort, not with its 10 s
    await expect(result).rejects.toBe(reason);
    expect(attempts).toEqual([1]);
  });

  it('with retries 0 makes one attempt', async () => {
    const { result, attempts } = setup([new RetryableError('503')], 0);
    await expect(result).rejects.toThrow('503 (gave up after 1 attempt)');
    expect(attempts).toEqual([1]);
  });
});

describe('retryDelayMs', () => {
  const options = { minDelayMs: 100, maxDelayMs: 1000 };

  it('grows exponentially with jitter between minDelayMs and the doubling cap', () => {
    expect([1, 2, 3, 4].map((a) => retryDelayMs(a, options, 0))).toEqual([100, 100, 100, 100]);
    expect([1, 2, 3, 4].map((a) => retryDelayMs(a, options, 0.999999))).toEqual([100, 200, 400, 800]);
  });

  it('is capped by maxDelayMs', () => {
    expect(retryDelayMs(20, options, 0.999999)).toBe(1000);
    expect(retryDelayMs(2000, options, 0.999999)).toBe(1000);
  });

  it('honours a Retry-After beyond maxDelayMs, up to MAX_RETRY_AFTER_MS', () => {
    expect(retryDelayMs(1, options, 0, 7000)).toBe(7000);
    expect(retryDelayMs(1, options, 0, 10 * MAX_RETRY_AFTER_MS)).toBe(MAX_RETRY_AFTER_MS);
    expect(retryDelayMs(4, options, 0.999999, 50)).toBe(800);
  });
});
