/** Time, passed in so schedules, expiries and rate limits can be tested without waiting. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
});

/** A clock that only moves when told to: `advance(ms)` also resolves the sleeps that are due. */
export function manualClock(start = 1_700_000_000_000): Clock & { advance(ms: number): void } {
  let now = start;
  let sleepers: { until: number; resolve: () => void }[] = [];
  return {
    now: () => now,
    sleep(ms: number) {
      return new Promise<void>((resolve) => sleepers.push({ until: now + ms, resolve }));
    },
    advance(ms: number) {
      now += ms;
      const due = sleepers.filter((s) => s.until <= now);
      sleepers = sleepers.filter((s) => s.until > now);
      for (const s of due) s.resolve();
    },
  };
}
