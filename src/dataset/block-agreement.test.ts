import { describe, expect, it } from 'vitest';
import { blockDisagreementMessage, disagreeingFields } from './block-agreement.ts';

const block = { hash: '0xab', number: 5, timestamp: '2024-01-01T00:00:00.000Z' };
const row = { blockHash: '0xab', blockNumber: 5, blockTimestamp: '2024-01-01T00:00:00.000Z' };

describe('disagreeingFields', () => {
  it('finds nothing when two rows name the same block, whatever the spelling of its time', () => {
    expect(disagreeingFields(block, { ...row })).toEqual([]);
    expect(disagreeingFields(block, { ...row, blockTimestamp: '2024-01-01T00:00:00Z' })).toEqual([]);
    expect(disagreeingFields(block, { ...row, blockTimestamp: '2024-01-01T01:00:00+01:00' })).toEqual([]);
  });

  it('names every field two rows of one block disagree on', () => {
    expect(disagreeingFields(block, { ...row, blockNumber: 6 })).toEqual(['number']);
    expect(disagreeingFields(block, { ...row, blockHash: '0xcd', blockTimestamp: '2024-01-01T00:00:01.000Z' })).toEqual(['hash', 'timestamp']);
  });

  it('takes a time that is not a date for a different time', () => {
    expect(disagreeingFields(block, { ...row, blockTimestamp: 'yesterday' })).toEqual(['timestamp']);
  });
});

describe('blockDisagreementMessage', () => {
  it('names the block, the fields, both sightings and what to do', () => {
    const message = blockDisagreementMessage(block, { ...row, blockNumber: 6 });
    expect(message).toContain('Transfers in block 0xab disagree on its number (5 0xab at 2024-01-01T00:00:00.000Z, then 6 0xab at');
    expect(message).toContain('run the range again');
  });
});
