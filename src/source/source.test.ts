import { describe, expect, it } from 'vitest';
import { extendSource, type Source } from './source.ts';

describe('extendSource', () => {
  it("keeps the source's getters getters: what they give is read when asked, not when the copy was made", async () => {
    let made: Source['checks'];
    const lazy = {
      get checks() {
        return made;
      },
      get headerBatchSize() {
        return made ? 50 : 100;
      },
      close: async () => undefined,
    } as unknown as Source;
    const closed: string[] = [];
    const run = extendSource(lazy, { close: async () => void closed.push('run'), saveLearned: async () => undefined });
    expect(run.checks).toBeUndefined();
    expect(run.headerBatchSize).toBe(100);
    made = { chain: 1, checkHeader: () => ({ header: {} as never, extra: null, hashVerified: true, unverifiedReason: null }) };
    expect(run.checks?.chain).toBe(1);
    expect(run.headerBatchSize).toBe(50);
    // the extra's members take the source's place; a spread of a spread keeps them too
    await extendSource(run, {}).close();
    expect(closed).toEqual(['run']);
    expect(typeof extendSource(run, {}).saveLearned).toBe('function');
  });
});
