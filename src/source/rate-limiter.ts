import type { Clock } from '../common/clock.ts';
import { ConfigError } from '../common/errors.ts';
import type { RateLimiter } from '../common/rate-limiter.ts';

/**
 * Spaces request starts evenly: at most `requestsPerSecond` start in any second, across every caller
 * sharing the instance (one per run). Callers are served in the order they call `acquire`. Unlimited when
 * `requestsPerSecond` is undefined.
 *
 * @example
 * const limiter = createRateLimiter({ requestsPerSecond: 10, clock: systemClock });
 * await limiter.acquire(); // the first at once, then one every 100 ms
 */
export function createRateLimiter({ requestsPerSecond, clock }: { requestsPerSecond: number | undefined; clock: Clock }): RateLimiter {
  if (requestsPerSecond === undefined) return { acquire: () => Promise.resolve() };
  if (!Number.isFinite(requestsPerSecond) || requestsPerSecond <= 0) {
    throw new ConfigError(`the requests-per-second limit must be a positive number, got ${requestsPerSecond}`);
  }
  const intervalMs = 1000 / requestsPerSecond;
  let nextStart = Number.NEGATIVE_INFINITY;
  return {
    acquire() {
      const now = clock.now();
      const start = Math.max(now, nextStart);
      nextStart = start + intervalMs;
      return start > now ? clock.sleep(start - now) : Promise.resolve();
    },
  };
}
