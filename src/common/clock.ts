/** Time, passed in so schedules, expiries and rate limits can be tested without waiting. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or as soon as `signal` aborts (its timer cleared: nothing keeps the process up for it). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  sleep: (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
});

/** A clock that only moves when told to: `advance(ms)` also resolves the sleeps that are due. */
export function manualClock(start = 1_700_000_000_000): Clock & { advance(ms: number): void } {
  let now = start;
  let sleepers: { until: number; resolve: () => void }[] = [];
  return {
    now: () => now,
    sleep(ms: number, signal?: AbortSignal) {
      if (signal?.aborted) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const sleeper = { until: now + ms, resolve };
        sleepers.push(sleeper);
        signal?.addEventListener(
          'abort',
          () => {
            sleepers = sleepers.filter((s) => s !== sleeper);
            resolve();
          },
          { once: true },
        );
      });
    },
    advance(ms: number) {
      now += ms;
      const due = sleepers.filter((s) => s.until <= now);
      sleepers = sleepers.filter((s) => s.until > now);
      for (const s of due) s.resolve();
    },
  };
}
