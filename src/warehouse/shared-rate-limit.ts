import { createHash } from 'node:crypto';
import type { Clock } from '../common/clock.ts';
import { ConfigError } from '../common/errors.ts';
import type { RateLimiter } from '../common/rate-limiter.ts';
import type { Warehouse } from './db.ts';

// Reserves the next slot of the key's schedule in one statement: the row lock orders concurrent callers,
// PostgreSQL's clock is the one every machine shares, and an idle API earns no burst.
const RESERVE = `
  INSERT INTO api_rate_limits AS r (key, next_at) VALUES ($1, clock_timestamp() + make_interval(secs => $2))
  ON CONFLICT (key) DO UPDATE SET next_at = greatest(r.next_at, clock_timestamp()) + make_interval(secs => $2)
  RETURNING greatest(0, extract(epoch FROM r.next_at - make_interval(secs => $2) - clock_timestamp()) * 1000)::float8 AS wait_ms`;

/**
 * The key of an API's schedule: a digest of its base URL, so processes using the same project share one
 * limit, and the project id itself is never stored.
 *
 * @example rateLimitKey('https://mainnet.example/abc') // → 'api:3f1c…' (32 hex digits)
 */
export function rateLimitKey(apiBase: string): string {
  return `api:${createHash('sha256').update(apiBase).digest('hex').slice(0, 32)}`;
}

/**
 * A requests-per-second limit that holds across processes and machines: every process with the same `key`
 * and warehouse takes its turn from one schedule in PostgreSQL (`api_rate_limits`), request starts spaced
 * 1/`requestsPerSecond` apart.
 *
 * @example const limiter = createSharedRateLimiter({ warehouse, key: rateLimitKey(endpoint.base), requestsPerSecond: 20, clock });
 * await limiter.acquire(); // resolves at this request's turn
 */
export function createSharedRateLimiter(deps: { warehouse: Warehouse; key: string; requestsPerSecond: number; clock: Clock }): RateLimiter {
  if (!Number.isFinite(deps.requestsPerSecond) || deps.requestsPerSecond <= 0) {
    throw new ConfigError(`the requests-per-second limit must be a positive number, got ${deps.requestsPerSecond}`);
  }
  const intervalSeconds = 1 / deps.requestsPerSecond;
  return {
    async acquire() {
      const { rows } = await deps.warehouse.pool.query<{ wait_ms: number }>(RESERVE, [deps.key, intervalSeconds]);
      const wait = rows[0]?.wait_ms ?? 0;
      if (wait > 0) await deps.clock.sleep(wait);
    },
  };
}
