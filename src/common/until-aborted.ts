/**
 * Waits for `work` unless `signal` aborts first: its value (`{ value }`), or `undefined` once the signal has aborted
 * (already, or while waiting). `work` itself goes on; whoever abandons it must have handled its failure. A failure
 * of `work` before the abort is thrown. The listener on `signal` is removed as soon as either settles, so a loop
 * waiting many times on one signal adds none.
 *
 * @example const answer = await untilAborted(fetchPage(key), stop); // → { value: page }, or undefined once stopped
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<{ value: T } | undefined> {
  if (!signal) return work.then((value) => ({ value }));
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ value });
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
