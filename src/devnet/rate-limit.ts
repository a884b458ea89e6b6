import type { Clock } from '../common/clock.ts';

/**
 * A token bucket per project id: `rps` requests per second with a burst of one second's worth.
 * `take` answers whether the request may go on, and if not, how many whole seconds to wait (Retry-After).
 */
export function createRateLimiter(rps: number | undefined, clock: Pick<Clock, 'now'>) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(project: string): { ok: true } | { ok: false; retryAfterSeconds: number } {
      if (!rps) return { ok: true };
      const now = clock.now();
      const bucket = buckets.get(project) ?? { tokens: rps, at: now };
      bucket.tokens = Math.min(rps, bucket.tokens + ((now - bucket.at) / 1000) * rps);
      bucket.at = now;
      buckets.set(project, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { ok: true };
      }
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / rps)) };
    },
  };
}
