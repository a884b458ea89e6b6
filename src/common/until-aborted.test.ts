import { describe, expect, it } from 'vitest';
import { untilAborted } from './until-aborted.ts';

/** A promise and the means to settle it from the test. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('untilAborted', () => {
  it('gives the value of work that settles first', async () => {
    const stop = new AbortController();
    await expect(untilAborted(Promise.resolve(7), stop.signal)).resolves.toEqual({ value: 7 });
    await expect(untilAborted(Promise.resolve(8), undefined)).resolves.toEqual({ value: 8 });
  });

  it('stops waiting for work that never answers once the signal aborts', async () => {
    const stop = new AbortController();
    const hung = deferred<number>();
    const waiting = untilAborted(hung.promise, stop.signal);
    stop.abort(new Error('stopped'));
    await expect(waiting).resolves.toBeUndefined();
    // the work settling later changes nothing
    hung.resolve(1);
    await expect(waiting).resolves.toBeUndefined();
  });

  it('does not wait at all on a signal already aborted', async () => {
    const stop = new AbortController();
    stop.abort();
    await expect(untilAborted(new Promise<number>(() => undefined), stop.signal)).resolves.toBeUndefined();
  });

  it('throws the failure of work that fails before the abort', async () => {
    const stop = new AbortController();
    await expect(untilAborted(Promise.reject(new Error('refused')), stop.signal)).rejects.toThrow('refused');
  });

  it('leaves no listener on the signal after many waits', async () => {
    const stop = new AbortController();
    let listeners = 0;
    const add = stop.signal.addEventListener.bind(stop.signal);
    const remove = stop.signal.removeEventListener.bind(stop.signal);
    stop.signal.addEventListener = ((...a: Parameters<typeof add>) => {
      listeners++;
      add(...a);
    }) as typeof add;
    stop.signal.removeEventListener = ((...a: Parameters<typeof remove>) => {
      listeners--;
      remove(...a);
    }) as typeof remove;
    for (let i = 0; i < 100; i++) await untilAborted(Promise.resolve(i), stop.signal);
    await untilAborted(Promise.reject(new Error('x')), stop.signal).catch(() => undefined);
    expect(listeners).toBe(0);
  });
});
