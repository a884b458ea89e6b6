import { describe, expect, it } from 'vitest';
import { manualClock } from '../common/clock.ts';
import { ConfigError } from '../common/errors.ts';
import { createRateLimiter } from './rate-limiter.ts';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('createRateLimiter', () => {
  it('starts at most requestsPerSecond requests in a second, spaced evenly, in call order', async () => {
    const clock = manualClock(0);
    const limiter = createRateLimiter({ requestsPerSecond: 4, clock });
    const started: [number, number][] = [];
    for (let i = 0; i < 9; i++) void limiter.acquire().then(() => started.push([i, clock.now()]));
    for (let t = 0; t < 2100; t += 50) {
      await flush();
      clock.advance(50);
    }
    await flush();
    expect(started.map(([i]) => i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(started.map(([, at]) => at)).toEqual([0, 250, 500, 750, 1000, 1250, 1500, 1750, 2000]);
  });

  it('lets a request start at once after a quiet period', async () => {
    const clock = manualClock(0);
    const limiter = createRateLimiter({ requestsPerSecond: 2, clock });
    await limiter.acquire();
    clock.advance(10_000);
    let started = false;
    void limiter.acquire().then(() => (started = true));
    await flush();
    expect(started).toBe(true);
  });

  it('holds a request until its slot comes', async () => {
    const clock = manualClock(0);
    const limiter = createRateLimiter({ requestsPerSecond: 2, clock });
    await limiter.acquire();
    let started = false;
    void limiter.acquire().then(() => (started = true));
    clock.advance(499);
    await flush();
    expect(started).toBe(false);
    clock.advance(1);
    await flush();
    expect(started).toBe(true);
  });

  it('is unlimited when requestsPerSecond is undefined', async () => {
    const clock = manualClock(0);
    const limiter = createRateLimiter({ requestsPerSecond: undefined, clock });
    await Promise.all(Array.from({ length: 1000 }, () => limiter.acquire()));
    expect(clock.now()).toBe(0);
  });

  it('refuses a limit that is not a positive number', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createRateLimiter({ requestsPerSecond: bad, clock: manualClock() })).toThrow(ConfigError);
    }
  });
});
