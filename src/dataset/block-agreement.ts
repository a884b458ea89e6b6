import type { TransferRecord } from './types.ts';

/** A block as the first of its rows named it. */
export interface BlockSighting {
  hash: string;
  number: number;
  /** ISO 8601. */
  timestamp: string;
}

export type BlockField = 'hash' | 'number' | 'timestamp';

/** The block fields of a transfer row. */
export type BlockOfRow = Pick<TransferRecord, 'blockHash' | 'blockNumber' | 'blockTimestamp'>;

const AGREE: readonly BlockField[] = [];

/**
 * The one rule for rows of one block, wherever they meet (in a page, across pages, in the warehouse): they
 * agree on the block's hash, number and time. Times agree when they name the same instant, whatever their
 * spelling. Returns the fields two sightings disagree on; none when they agree (allocates nothing then).
 *
 * @example disagreeingFields({ hash: '0xab', number: 5, timestamp: '2024-01-01T00:00:00.000Z' },
 *                            { blockHash: '0xab', blockNumber: 5, blockTimestamp: '2024-01-01T00:00:00Z' }) // → []
 */
export function disagreeingFields(seen: BlockSighting, row: BlockOfRow): readonly BlockField[] {
  const hash = seen.hash !== row.blockHash;
  const number = seen.number !== row.blockNumber;
  const time = seen.timestamp !== row.blockTimestamp && Date.parse(seen.timestamp) !== Date.parse(row.blockTimestamp);
  if (!hash && !number && !time) return AGREE;
  const fields: BlockField[] = [];
  if (hash) fields.push('hash');
  if (number) fields.push('number');
  if (time) fields.push('timestamp');
  return fields;
}

/**
 * What to tell a user when a block's rows disagree: the source served inconsistent data.
 *
 * @example blockDisagreementMessage({ hash: '0xab', number: 5, timestamp: 't1' }, { blockHash: '0xab', blockNumber: 6, blockTimestamp: 't1' })
 * // → 'Transfers in block 0xab disagree on its number (5 0xab at t1, then 6 0xab at t1). …'
 */
export function blockDisagreementMessage(seen: BlockSighting, row: BlockOfRow): string {
  const fields = disagreeingFields(seen, row);
  const which = fields.length ? fields.join(' and ') : 'nothing';
  const block = seen.hash === row.blockHash ? `block ${seen.hash}` : `block ${seen.number}`;
  return (
    `Transfers in ${block} disagree on its ${which} (${seen.number} ${seen.hash} at ${seen.timestamp}, then ${row.blockNumber} ${row.blockHash} at ${row.blockTimestamp}). ` +
    'The source served inconsistent data; run the range again, and report it to the provider if it persists.'
  );
}
