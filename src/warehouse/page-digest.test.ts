import { describe, expect, it } from 'vitest';
import type { TransferRecord } from '../dataset/types.ts';
import { pageDigest, postgresTimestamp } from './page-digest.ts';

const row = (blockNumber: number, logIndex: number, over: Partial<TransferRecord> = {}): TransferRecord => ({
  contractAddress: `0x${'1'.repeat(40)}`,
  fromAddress: `0x${'2'.repeat(40)}`,
  toAddress: `0x${'3'.repeat(40)}`,
  value: '115792089237316195423570985008687907853269984665640564039457584007913129639935',
  blockHash: `0x${'4'.repeat(64)}`,
  blockNumber,
  blockTimestamp: '2023-04-08T21:26:11.000Z',
  transactionHash: `0x${String(logIndex).padStart(64, '5')}`,
  transactionIndex: 3,
  logIndex,
  ...over,
});

describe('postgresTimestamp', () => {
  it('prints what PostgreSQL prints for a timestamptz in ISO style and UTC', () => {
    expect(postgresTimestamp('2023-04-08T21:26:11.000Z')).toBe('2023-04-08 21:26:11+00');
    expect(postgresTimestamp('2023-04-08T21:26:11.250Z')).toBe('2023-04-08 21:26:11.25+00');
    expect(postgresTimestamp('2023-04-08T21:26:11.007Z')).toBe('2023-04-08 21:26:11.007+00');
  });
});

describe('pageDigest', () => {
  const page = [row(9, 2), row(9, 1), row(7, 5)];

  it('does not depend on the order the rows come in', () => {
    expect(pageDigest([...page].reverse())).toBe(pageDigest(page));
    expect(pageDigest([page[1]!, page[2]!, page[0]!])).toBe(pageDigest(page));
  });

  it('changes with any field of any row, and with a row more or less', () => {
    const seen = new Set([pageDigest(page)]);
    const changes: Partial<TransferRecord>[] = [
      { value: '0' },
      { blockTimestamp: '2023-04-08T21:26:11.001Z' },
      { fromAddress: `0x${'6'.repeat(40)}` },
      { toAddress: `0x${'6'.repeat(40)}` },
      { contractAddress: `0x${'6'.repeat(40)}` },
      { blockHash: `0x${'6'.repeat(64)}` },
      { transactionHash: `0x${'6'.repeat(64)}` },
      { transactionIndex: 4 },
      { logIndex: 0 },
      { blockNumber: 8 },
    ];
    for (const change of changes) seen.add(pageDigest([page[0]!, { ...page[1]!, ...change }, page[2]!]));
    seen.add(pageDigest(page.slice(1)));
    seen.add(pageDigest([...page, row(6, 0)]));
    expect(seen.size).toBe(changes.length + 3);
  });
});
