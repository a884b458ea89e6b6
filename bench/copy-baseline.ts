import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import copyStreams from 'pg-copy-streams';
import type { TransferRecord } from '../src/dataset/types.ts';
import { copyLine, TRANSFER_COLUMNS } from '../src/warehouse/copy.ts';
import { withClient } from './bench-database.ts';

/** The chain and provenance columns a plain COPY into a copy of token_transfers must fill (they are NOT NULL). */
const PROVENANCE = ['chain_id', 'inserted_by_run', 'updated_by_run'] as const;

/**
 * One line of COPY text for a copy of token_transfers: the transfer's columns, then chain 1, and run 1 as both
 * provenance columns.
 *
 * @example baselineCopyLine(transfer) // → '0xabc…\t3\t0xa0b8…\t…\t17\t1\t1\t1\n'
 */
export function baselineCopyLine(t: TransferRecord): string {
  return copyLine(t, '\t1\t1\t1\n');
}

export interface TruthFile {
  rows: number;
  /** Distinct block hashes the transfers point at: the headers a first load fetches. */
  distinctBlocks: number;
  /** With `fromBlock`: the same two counts over the blocks from there on. */
  from?: { rows: number; distinctBlocks: number };
}

/**
 * Streams the server's `/__truth/transfers.jsonl`, a line at a time, counting the rows and their distinct
 * blocks (and, given `fromBlock`, those of the blocks from there on), and, given a path, writes them there as
 * COPY text. Untimed: it prepares the plain-COPY baseline.
 *
 * @example await readTruth('http://127.0.0.1:40123', '/tmp/bench/transfers.copy') // → { rows: 1000000, distinctBlocks: 95123 }
 */
export async function readTruth(origin: string, copyFile?: string, fromBlock?: number): Promise<TruthFile> {
  const res = await fetch(`${origin}/__truth/transfers.jsonl`);
  if (!res.ok || !res.body) throw new Error(`GET /__truth/transfers.jsonl answered HTTP ${res.status}`);
  const out = copyFile === undefined ? undefined : createWriteStream(copyFile);
  const blocks = new Set<string>();
  const blocksFrom = new Set<string>();
  let rows = 0;
  let rowsFrom = 0;
  let rest = '';
  let batch = '';
  const flush = async () => {
    if (out && batch && !out.write(batch)) await once(out, 'drain');
    batch = '';
  };
  for await (const chunk of Readable.fromWeb(res.body as WebReadableStream<Uint8Array>, { encoding: 'utf8' })) {
    const lines = (rest + (chunk as string)).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line) continue;
      const t = JSON.parse(line) as TransferRecord;
      blocks.add(t.blockHash);
      if (out) batch += baselineCopyLine(t);
      rows++;
      if (fromBlock !== undefined && t.blockNumber >= fromBlock) {
        blocksFrom.add(t.blockHash);
        rowsFrom++;
      }
    }
    if (batch.length > 1 << 20) await flush();
  }
  if (rest.trim()) throw new Error('/__truth/transfers.jsonl ended in the middle of a line');
  await flush();
  if (out) {
    out.end();
    await once(out, 'finish');
  }
  return { rows, distinctBlocks: blocks.size, ...(fromBlock !== undefined && { from: { rows: rowsFrom, distinctBlocks: blocksFrom.size } }) };
}

export interface CopyBaseline {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  /** CPU seconds PostgreSQL spent during the COPY, when its processes can be seen. */
  postgresCpuSeconds?: number;
}

/**
 * The plain-COPY baseline: `CREATE TABLE bench_copy (LIKE token_transfers INCLUDING ALL)` (same columns,
 * checks and indexes), then one `COPY bench_copy (…) FROM STDIN` of the file, timed alone. A CHECKPOINT
 * before and after (where the role may) keeps its WAL from landing on whatever runs next; the table is
 * dropped afterwards.
 *
 * @example await plainCopyBaseline(db.url, '/tmp/bench/transfers.copy', 1_000_000) // → { rows: 1000000, seconds: 21.3, rowsPerSecond: 46948 }
 */
export async function plainCopyBaseline(databaseUrl: string, path: string, expectedRows: number, postgresCpu?: () => number | undefined): Promise<CopyBaseline> {
  return withClient(databaseUrl, async (client) => {
    await client.query('DROP TABLE IF EXISTS bench_copy');
    await client.query('CREATE TABLE bench_copy (LIKE token_transfers INCLUDING ALL)');
    await checkpoint(client);
    try {
      const columns = [...TRANSFER_COLUMNS, ...PROVENANCE].join(', ');
      const cpuBefore = postgresCpu?.();
      const started = performance.now();
      const stream = client.query(copyStreams.from(`COPY bench_copy (${columns}) FROM STDIN`));
      await pipeline(createReadStream(path, { highWaterMark: 1 << 20 }), stream);
      const seconds = (performance.now() - started) / 1000;
      const cpuAfter = postgresCpu?.();
      if (stream.rowCount !== expectedRows) throw new Error(`the plain COPY loaded ${stream.rowCount} rows, expected ${expectedRows}`);
      return {
        rows: stream.rowCount,
        seconds,
        rowsPerSecond: stream.rowCount / seconds,
        ...(cpuBefore !== undefined && cpuAfter !== undefined && { postgresCpuSeconds: cpuAfter - cpuBefore }),
      };
    } finally {
      await client.query('DROP TABLE IF EXISTS bench_copy');
      await checkpoint(client);
    }
  });
}

/** CHECKPOINT needs superuser or pg_checkpoint: without either the bench goes on without it. */
export async function checkpoint(client: { query(sql: string): Promise<unknown> }): Promise<void> {
  await client.query('CHECKPOINT').catch(() => undefined);
}
