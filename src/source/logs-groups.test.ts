import { describe, expect, it } from 'vitest';
import { createLogsGroups } from './logs-groups.ts';

const a = { contract: '0xa', fromBlock: 0, toBlock: 999 };
const b = { contract: '0xb', fromBlock: 0, toBlock: 999 };
const c = { contract: '0xc', fromBlock: 600, toBlock: 999 };
const d = { contract: '0xd', fromBlock: 0, toBlock: 999 };

describe('createLogsGroups', () => {
  it('names the contracts expected at a top with the asker, once a call left them just above it', () => {
    const groups = createLogsGroups<string>(50);
    expect(groups.members(a, 999)).toEqual([a]);
    groups.issued([a], 999, 500);
    groups.issued([b], 999, 500);
    expect(groups.spanFrom(999)).toBe(500);
    // a top inside the span meets it where it started; the shortest span holding it wins
    expect(groups.spanFrom(700)).toBe(500);
    expect(groups.spanFrom(1000)).toBeUndefined();
    groups.issued([c], 800, 600);
    expect(groups.spanFrom(700)).toBe(600);
    expect(groups.members(a, 499)).toEqual([a, b]);
    expect(groups.members(b, 499)).toEqual([b, a]);
    expect(groups.members(a, 498)).toEqual([a]);
  });

  it('expects nothing more of a contract whose query ends in the span, or that it forgot', () => {
    const groups = createLogsGroups<string>(50);
    groups.issued([a, c, b], 999, 500);
    expect(groups.members(a, 499)).toEqual([a, b]);
    groups.forget(b);
    expect(groups.members(a, 499)).toEqual([a]);
  });

  it('hands a share to the query it was made for, once; the query asking at another top drops it', async () => {
    const groups = createLogsGroups<string>(50);
    groups.share([b], 499, () => Promise.resolve('b’s logs'));
    expect(groups.take({ ...b, fromBlock: 7 }, 499)).toBeUndefined();
    expect(groups.take(b, 400)).toBeUndefined();
    expect(groups.take(b, 499)).toBeUndefined();
    groups.share([b], 499, () => Promise.resolve('b’s logs'));
    await expect(groups.take(b, 499)).resolves.toBe('b’s logs');
    expect(groups.take(b, 499)).toBeUndefined();
  });

  it('leaves out a contract whose share still waits, and caps a call at its most contracts', () => {
    const groups = createLogsGroups<string>(2);
    groups.issued([a, b, d], 999, 500);
    groups.share([b], 499, () => Promise.reject(new Error('asked alone')));
    expect(groups.members(a, 499)).toEqual([a, d]);
    groups.forget(b);
    groups.issued([b], 999, 500);
    expect(groups.members(a, 499)).toHaveLength(2);
    // a contract the caller leaves out takes no place under the cap
    const other = createLogsGroups<string>(2);
    other.issued([a, b, d], 999, 500);
    expect(other.members(a, 499)).toEqual([a, b]);
    expect(other.members(a, 499, (contract) => contract !== b.contract)).toEqual([a, d]);
    expect(() => createLogsGroups(0)).toThrow(RangeError);
  });

  it('tells apart chunks of one contract read at once, and names a contract once in a call', () => {
    const groups = createLogsGroups<string>(50);
    const upper = { contract: '0xa', fromBlock: 1000, toBlock: 1999 };
    const lower = { contract: '0xa', fromBlock: 0, toBlock: 999 };
    groups.issued([upper], 1999, 1500);
    groups.issued([lower], 999, 500);
    groups.issued([b], 999, 500);
    expect(groups.members(b, 499)).toEqual([b, lower]);
    expect(groups.members(upper, 1499)).toEqual([upper]);
    // another query of 0xa expected at the same top is not named twice
    groups.issued([{ ...lower, toBlock: 1200 }], 999, 500);
    expect(groups.members(b, 499)).toHaveLength(2);
  });

  it('finds the queries of other contracts a span or two behind a top, and wakes the one waiting there once they came down to it', async () => {
    const groups = createLogsGroups<string>(50);
    // a ran ahead to 499; b and d were last asked down to 700 and 900: behind a within 600 blocks, d not within 300
    groups.issued([a], 999, 500);
    groups.issued([b], 999, 701);
    groups.issued([d], 999, 901);
    expect(groups.behind(a, 499, 100)).toBeUndefined();
    // c's query ends at 600: it never comes down to 499
    groups.issued([c], 1200, 1000);
    const wait = groups.behind(a, 499, 600)!;
    expect(wait).toBeDefined();
    expect(groups.awaited(499)).toBe(true);
    let woken = false;
    void wait.caughtUp.then(() => (woken = true));
    // b comes down to 499 (d is still behind, within the window): a waits on
    groups.issued([b], 700, 500);
    await Promise.resolve();
    expect(woken).toBe(false);
    // d's call names a too: a share waits for it at its top, and it goes on
    groups.issued([d, a], 900, 500);
    groups.share([a], 499, () => Promise.resolve('a’s logs'));
    await wait.caughtUp;
    expect(woken).toBe(true);
    expect(groups.awaited(499)).toBe(false);
    await expect(groups.take(a, 499)).resolves.toBe('a’s logs');
  });

  it('wakes a waiting query when those behind it end, and forgets a wait given up', async () => {
    const groups = createLogsGroups<string>(50);
    groups.issued([a], 999, 500);
    groups.issued([b], 999, 701);
    const wait = groups.behind(a, 499, 600)!;
    groups.forget(b);
    await wait.caughtUp;
    groups.issued([b], 999, 701);
    const again = groups.behind(a, 499, 600)!;
    again.cancel();
    expect(groups.awaited(499)).toBe(false);
    // a query of the same contract is not waited for: one call names a contract once
    expect(groups.behind({ ...a, fromBlock: 0, toBlock: 450 }, 499, 600)).toBeDefined();
    expect(groups.behind({ contract: '0xb', fromBlock: 0, toBlock: 499 }, 499, 600)).toBeUndefined();
  });
});
