import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { digitsLength, writeAscii, writeDigits, writeKnown } from '../common/ascii-bytes.ts';
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
 * The COPY text of `rows[first]` to `rows[last]` (either way round: from the last to the first when `last` is the
 * smaller), each line ending in `end`, written straight into one buffer: the same bytes as their `copyLine`s, with
 * no string made per row (a first load's COPY text, as strings and then buffers, was 21–30 % of all its exporter
 * allocated: bench/NOTES.md, "A twenty-sixth day"). Every field was validated, so each is ASCII: a character is a
 * byte.
 *
 * @example copyLines(rows, 299, 0, Buffer.from('\t1\t7\t7\n')) // → the 300 rows' lines, the last row's first
 */
export function copyLines(rows: readonly TransferRecord[], first: number, last: number, end: Buffer): Buffer {
  const step = last >= first ? 1 : -1;
  let size = 0;
  for (let i = first; i !== last + step; i += step) {
    const t = rows[i]!;
    size +=
      t.transactionHash.length +
      t.contractAddress.length +
      t.fromAddress.length +
      t.toAddress.length +
      t.value.length +
      t.blockHash.length +
      t.blockTimestamp.length +
      digitsLength(t.logIndex, 10) +
      digitsLength(t.blockNumber, 10) +
      digitsLength(t.transactionIndex, 10) +
      9 +
      end.length;
  }
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = first; i !== last + step; i += step) {
    const t = rows[i]!;
    at = writeAscii(t.transactionHash, bytes, at);
    bytes[at++] = TAB;
    at = writeDigits(t.logIndex, 10, bytes, at);
    bytes[at++] = TAB;
    at = writeAscii(t.contractAddress, bytes, at);
    bytes[at++] = TAB;
    at = writeAscii(t.fromAddress, bytes, at);
    bytes[at++] = TAB;
    at = writeAscii(t.toAddress, bytes, at);
    bytes[at++] = TAB;
    at = writeAscii(t.value, bytes, at);
    bytes[at++] = TAB;
    at = writeDigits(t.blockNumber, 10, bytes, at);
    bytes[at++] = TAB;
    at = writeAscii(t.blockHash, bytes, at);
    bytes[at++] = TAB;
    at = writeAscii(t.blockTimestamp, bytes, at);
    bytes[at++] = TAB;
    at = writeDigits(t.transactionIndex, 10, bytes, at);
    at = writeKnown(end, bytes, at);
  }
  return bytes;
}

const TAB = 0x09;

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
