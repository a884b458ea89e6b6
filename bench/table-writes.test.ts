import { describe, expect, it } from 'vitest';
import { diffWrites } from './table-writes.ts';

describe('diffWrites', () => {
  it('keeps only the tables whose counters moved, with what moved', () => {
    const before = { a: { inserted: 10, updated: 2, deleted: 0 }, b: { inserted: 5, updated: 0, deleted: 0 } };
    const after = { a: { inserted: 10, updated: 2, deleted: 0 }, b: { inserted: 9, updated: 1, deleted: 4 } };
    expect(diffWrites(before, after)).toEqual({ b: { inserted: 4, updated: 1, deleted: 4 } });
  });

  it('counts a table that appeared in between from zero', () => {
    expect(diffWrites({}, { c: { inserted: 3, updated: 0, deleted: 0 } })).toEqual({ c: { inserted: 3, updated: 0, deleted: 0 } });
  });
});
