import type { TransferKey } from '../dataset/types.ts';
import { createBloomBitsCache, missingFromBloom, type BloomTransfer } from '../eth/logs-bloom.ts';
import { ChainDataError } from './errors.ts';

/** A stored transfer as the bloom check reads it and names it. */
export interface BloomRow extends BloomTransfer, TransferKey {
  blockNumber: number;
  blockHash: string;
}

export interface BloomCheck {
  /**
   * Checks `rows[from]` to `rows[to - 1]`, all of the one block whose header's logsBloom is `bloom`: each must
   * set the bits of its contract address, the Transfer topic, and its from and to topics. Throws a
   * ChainDataError naming the first the bloom rules out (and how many more), once all are checked.
   */
  check(bloom: Uint8Array, rows: readonly BloomRow[], from?: number, to?: number): void;
  /** Counts transfers the source already found in their blocks' blooms (`TransfersPage.bloomProven`). */
  proven(rows: number): void;
  /** Transfers checked so far. */
  readonly checked: number;
}

/** Ruled-out transfers a message names one by one; the rest are counted. */
const NAMED = 3;

/** What of a transfer a bloom rules out: its contract address, the Transfer topic, its from or its to topic. */
type RuledOut = NonNullable<ReturnType<typeof missingFromBloom>>;

/**
 * The bloom check of stored transfers, for a run: the bit positions of each address are hashed once and
 * remembered (`createBloomBitsCache`: a job's contracts and its busy addresses recur on every page), so a
 * check costs a few table look-ups and bit tests per row. `onChecked` hears how many rows each call checked.
 *
 * @example
 * const blooms = createBloomCheck((n) => metrics?.transfersBloomChecked({ job, chain }, n));
 * blooms.check(bloomBytes(header.logsBloom), rows);
 * // or throws ChainDataError: The source put a transfer in a block that does not hold it (…):
 * //   transaction 0x…, log 7, contract 0x…, block 17000001 (0x…): the block header's logsBloom rules out its from topic (address 0x…)
 */
export function createBloomCheck(onChecked?: (rows: number) => void): BloomCheck {
  const bits = createBloomBitsCache();
  let checked = 0;
  return {
    check(bloom, rows, from = 0, to = rows.length) {
      let ruledOut: { row: BloomRow; item: RuledOut }[] | undefined;
      // the rows are of one block: once a row's contract and the Transfer topic are in its bloom, they are for the next rows of that contract
      let held: string | undefined;
      for (let i = from; i < to; i++) {
        const row = rows[i]!;
        const item = missingFromBloom(bloom, row, bits, row.contractAddress === held);
        if (!item || item === 'from topic' || item === 'to topic') held = row.contractAddress;
        if (!item) continue;
        ruledOut ??= [];
        ruledOut.push({ row, item });
      }
      checked += to - from;
      onChecked?.(to - from);
      if (ruledOut) throw bloomError(ruledOut);
    },
    proven(rows) {
      checked += rows;
      onChecked?.(rows);
    },
    get checked() {
      return checked;
    },
  };
}

function itemValue(row: BloomRow, item: RuledOut): string {
  switch (item) {
    case 'contract address':
      return ` ${row.contractAddress}`;
    case 'from topic':
      return ` (address ${row.fromAddress})`;
    case 'to topic':
      return ` (address ${row.toAddress})`;
    case 'Transfer topic':
      return '';
  }
}

function bloomError(ruledOut: readonly { row: BloomRow; item: RuledOut }[]): ChainDataError {
  const named = ruledOut
    .slice(0, NAMED)
    .map(
      ({ row, item }) =>
        `transaction ${row.transactionHash}, log ${row.logIndex}, contract ${row.contractAddress}, block ${row.blockNumber} (${row.blockHash}): ` +
        `the block header's logsBloom rules out its ${item}${itemValue(row, item)}`,
    );
  const more = ruledOut.length > NAMED ? `\n  … and ${ruledOut.length - NAMED} more transfer(s) of these blocks` : '';
  const first = ruledOut[0]!.row;
  return new ChainDataError(
    `The source put ${ruledOut.length === 1 ? 'a transfer' : `${ruledOut.length} transfers`} in a block that does not hold ${ruledOut.length === 1 ? 'it' : 'them'} ` +
      '(bad data: attributed to the wrong block; the row is stored as the source served it):\n' +
      `  ${named.join('\n  ')}${more}\n` +
      `Once the source serves it right, re-read the contract over block ${first.blockNumber} and the block the transaction is really in ` +
      `(\`erc20-etl backfill --contract ${first.contractAddress} --from LOW --to HIGH\`), which replaces the row; report it to the provider if it persists.`,
    {
      details: {
        transactionHash: first.transactionHash,
        logIndex: first.logIndex,
        contract: first.contractAddress,
        blockNumber: first.blockNumber,
        blockHash: first.blockHash,
        ruledOut: ruledOut[0]!.item,
        transfers: ruledOut.length,
      },
    },
  );
}
