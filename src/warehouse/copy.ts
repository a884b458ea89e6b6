import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type pg from 'pg';
import copyStreams from 'pg-copy-streams';
import type { TransferRecord } from '../dataset/types.ts';

/** Columns of a transfer as COPY writes them (token_transfers order, without provenance). */
export const TRANSFER_COLUMNS = [
  'transaction_hash',
  'log_index',
  'contract_address',
  'from_address',
  'to_address',
  'value',
  'block_number',
  'block_hash',
  'block_timestamp',
  'transaction_index',
] as const;

/**
 * One line of COPY text format, ending in `end` (the values of extra columns, then the newline). Every field was
 * validated (hex, decimal digits, ISO timestamps), so none holds a tab, newline or backslash that would need escaping.
 */
export function copyLine(t: TransferRecord, end = '\n'): string {
  return `${t.transactionHash}\t${t.logIndex}\t${t.contractAddress}\t${t.fromAddress}\t${t.toAddress}\t${t.value}\t${t.blockNumber}\t${t.blockHash}\t${t.blockTimestamp}\t${t.transactionIndex}${end}`;
}

/**
 * Rows per COPY data message: about 33 KB of text. Strings and buffers this small stay in V8's young generation
 * and malloc's reused memory; a page's text in one piece (330 KB) is a fresh mapping each time, and every one of
 * its pages is a page fault (the costliest part of writing it, on a virtual machine).
 */
const COPY_BATCH = 100;

/** Streams rows into `table (columns…)` with COPY FROM STDIN; resolves to the number of rows copied. */
export async function copyTransfers(
  client: pg.PoolClient,
  table: string,
  rows: Iterable<TransferRecord> | AsyncIterable<TransferRecord>,
  extraColumns: readonly string[] = [],
  extraValues = '',
): Promise<number> {
  const columns = [...TRANSFER_COLUMNS, ...extraColumns].join(', ');
  const stream = client.query(copyStreams.from(`COPY ${table} (${columns}) FROM STDIN`));
  const suffix = extraValues ? `\t${extraValues}\n` : '\n';
  async function* lines() {
    let batch = '';
    let n = 0;
    for await (const t of rows) {
      batch += copyLine(t, suffix);
      if (++n % COPY_BATCH === 0) {
        yield batch;
        batch = '';
      }
    }
    if (batch) yield batch;
  }
  await pipeline(Readable.from(lines()), stream);
  return stream.rowCount;
}
