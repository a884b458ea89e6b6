import { describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { RetriesExhaustedError } from '../common/retry.ts';
import { PgTransientError } from './pg-errors.ts';
import { retryStatement } from './statement-retry.ts';

const restart = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

describe('retryStatement', () => {
  it('tries work again after PostgreSQL ended its connection, and gives its value', async () => {
    let attempts = 0;
    const retries: string[] = [];
    const value = await retryStatement(
      async () => {
        attempts++;
        if (attempts < 3) throw restart();
        return 'stored';
      },
      { clock: systemClock, onRetry: (err) => retries.push(err.message) },
    );
    expect(value).toBe('stored');
    expect(attempts).toBe(3);
    expect(retries).toEqual(Array(2).fill('PostgreSQL reported the server shutting down (admin shutdown) (57P01); trying again'));
  });

  it('throws any other failure at once, unchanged', async () => {
    let attempts = 0;
    const unique = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    await expect(
      retryStatement(
        async () => {
          attempts++;
          throw unique;
        },
        { clock: systemClock },
      ),
    ).rejects.toBe(unique);
    expect(attempts).toBe(1);
  });

  it("ends its waits when the run is stopped, with the stop's reason", async () => {
    const stop = new AbortController();
    const stopped = new Error('stopped by SIGINT');
    let attempts = 0;
    const work = retryStatement(
      async () => {
        attempts++;
        if (attempts === 1) setTimeout(() => stop.abort(stopped), 20);
        throw restart();
      },
      { clock: systemClock, signal: stop.signal },
    );
    await expect(work).rejects.toBe(stopped);
    expect(attempts).toBeLessThanOrEqual(2);
  });

  it('says the warehouse gave up once its retries are spent', async () => {
    const clock = { ...systemClock, sleep: async () => undefined };
    const err = await retryStatement(
      async () => {
        throw restart();
      },
      { clock },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    expect((err as RetriesExhaustedError).lastError).toBeInstanceOf(PgTransientError);
  });
});
