/**
 * What paces requests to the chain API: the in-process limiter (src/source/rate-limiter.ts) and the one
 * shared by every process through PostgreSQL (src/warehouse/shared-rate-limit.ts) both give this.
 */
export interface RateLimiter {
  /** Resolves when the next request may start. */
  acquire(): Promise<void>;
}
