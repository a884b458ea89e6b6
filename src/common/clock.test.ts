import { describe, expect, it } from 'vitest';
import { manualClock, systemClock } from './clock.ts';

describe('sleep', () => {
  it('on the system clock ends when its signal aborts, its timer cleared', async () => {
    const timers = () => (process as unknown as { getActiveResourcesInfo(): string[] }).getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const stop = new AbortController();
    const started = performance.now();
    const slept = systemClock.sleep(60_000, stop.signal);
    setTimeout(() => stop.abort(), 20);
    await slept;
    expect(performance.now() - started).toBeLessThan(5_000);
    // nothing is left to keep the process up: the sleep's timer is gone
    expect(timers()).toBe(before);
  });

  it('on a manual clock ends when its signal aborts, and at once when it has aborted already', async () => {
    const clock = manualClock();
    const stop = new AbortController();
    let woke = false;
    const slept = clock.sleep(10_000, stop.signal).then(() => (woke = true));
    await Promise.resolve();
    expect(woke).toBe(false);
    stop.abort();
    await slept;
    expect(woke).toBe(true);
    await clock.sleep(10_000, stop.signal);
    clock.advance(10_000);
  });
});
