import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import pg from 'pg';
import pino from 'pino';
import { systemClock } from '../src/common/clock.ts';
import type { TransferRecord } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { openCopyGroup, type GroupedPage } from '../src/warehouse/copy-group.ts';
import { openCopyLanes } from '../src/warehouse/copy-lanes.ts';
import { openPageWriter } from '../src/warehouse/page-writer.ts';
import { copyTransfers } from '../src/warehouse/copy.ts';
import { type ChunkCheckpoint, loadPage, moveChunks, type MergeCounts, type PageLoad } from '../src/warehouse/load-page.ts';
import { latestRuns } from '../src/warehouse/report-queries.ts';
import { endRun } from '../src/warehouse/runs.ts';
import { createRange, type RangeState } from '../src/warehouse/ranges.ts';
import { captureLogger, migratedWarehouse, rowToTransfer } from './helpers/exporter.ts';

type Target = Awaited<ReturnType<typeof migratedWarehouse>>;
const RUN = '1';
const quiet = pino({ level: 'silent' });

// one chain, two contracts: each contract's range is one chunk, read newest first in pages of 50
const chain = generateSyntheticDataset({ seed: 77, blocks: 400, tokens: 2, transfers: 600, startBlock: 5_000_000 });
const contracts = [...new Set(chain.transfers.map((t) => t.contractAddress))].sort();
const rowsOf = (contract: string) => chain.transfers.filter((t) => t.contractAddress === contract).sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex);

/**
 * A chunk's pages of `size` rows, each with the position the chunk stands at before it (as created: no page key, no
 * block committed) and the checkpoint it reaches after it (pages end on a block's last row).
 */
function pagesOf(range: RangeState, rows: readonly TransferRecord[], size: number): Omit<PageLoad, 'mode'>[] {
  const chunk = range.chunks[0]!;
  const pages: Omit<PageLoad, 'mode'>[] = [];
  let start: ChunkCheckpoint = { pageKey: chunk.pageKey, resumeToBlock: chunk.resumeToBlock, done: chunk.done, openKeys: chunk.openKeys };
  for (let at = 0; at < rows.length; ) {
    let end = Math.min(rows.length, at + size);
    while (end < rows.length && rows[end]!.blockNumber === rows[end - 1]!.blockNumber) end++;
    const page = rows.slice(at, end);
    const done = end === rows.length;
    pages.push({
      runId: RUN,
      chainId: 1,
      rangeId: range.id,
      chunkId: chunk.id,
      contract: range.contract,
      rows: page,
      interior: null,
      carried: [],
      openRows: [],
      start,
      checkpoint: { pageKey: done ? null : `key-${end}`, resumeToBlock: page.at(-1)!.blockNumber, done, openKeys: [] },
    });
    start = pages.at(-1)!.checkpoint;
    at = end;
  }
  return pages;
}

/**
 * A pool on `url` whose first COMMIT fails as `fail` makes it fail (`send` sends a query on the connection); every
 * other query goes through.
 */
function poolFailingFirstCommit(url: string, fail: (client: pg.PoolClient, send: (...args: unknown[]) => Promise<unknown>) => Promise<unknown>): pg.Pool {
  const pool = new pg.Pool({ connectionString: url });
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  let failed = false;
  const patched = async () => {
    const client = await connect();
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
      if (failed || args[0] !== 'COMMIT') return query(...args);
      failed = true;
      return fail(client, query);
    };
    return client;
  };
  // pool.query connects with a callback, the writers with a promise
  pool.connect = ((callback?: (err: Error | undefined, client?: pg.PoolClient, done?: () => void) => void) => {
    if (!callback) return patched();
    patched().then(
      (client) => callback(undefined, client, () => client.release()),
      (err: Error) => callback(err),
    );
    return undefined;
  }) as typeof pool.connect;
  return pool;
}

/**
 * A pool on `url` whose first COMMIT commits and then loses its answer: the connection breaks before the client hears
 * back, as when a network drops at that moment. The caller sees the error pg gives for a lost connection.
 */
function poolLosingFirstCommitAnswer(url: string): pg.Pool {
  return poolFailingFirstCommit(url, (client, send) =>
    send('COMMIT').then(() => {
      (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      throw new Error('Connection terminated unexpectedly');
    }),
  );
}

/**
 * A pool on `url` whose first COMMIT never reaches the server: the client hears that its connection is gone, while the
 * server's side stays open, its backend idle in the transaction with the rows and the locks it took, as when a network
 * drops one direction or a proxy forgets the connection (TCP would end it hours later). `stranded`: those backends'
 * pids and the sockets left open, for the test to close.
 */
function poolStrandingFirstCommit(url: string): { pool: pg.Pool; stranded: { pid: number; socket: Socket }[] } {
  const stranded: { pid: number; socket: Socket }[] = [];
  const pool = poolFailingFirstCommit(url, (client) => {
    const c = client as unknown as { processID: number; connection: EventEmitter & { stream: Socket } };
    const socket = c.connection.stream;
    // nothing more reaches the backend, and nothing from it reaches the client
    socket.removeAllListeners();
    socket.on('error', () => undefined);
    socket.pause();
    stranded.push({ pid: c.processID, socket });
    // the client hears its connection is gone (its queries fail from now on)
    c.connection.emit('end');
    return Promise.reject(new Error('Connection terminated unexpectedly'));
  });
  return { pool, stranded };
}

describe('the group writer of fresh pages', () => {
  let target: Target;
  // pg warns (and its next major refuses) when a query is sent on a connection still running one: the writer never does
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  beforeAll(async () => {
    target = await migratedWarehouse('copy_group');
    process.on('warning', onWarning);
  });
  afterAll(async () => {
    process.off('warning', onWarning);
    await target.drop();
  });
  afterEach(() => {
    expect(warnings).toEqual([]);
  });

  /** A new range per contract over the chain's blocks, each one fresh chunk; the warehouse emptied first. */
  const freshRanges = async (): Promise<RangeState[]> => {
    await target.warehouse.pool.query('TRUNCATE token_transfers, export_chunks, export_ranges, export_runs CASCADE');
    await target.warehouse.pool.query(`INSERT INTO export_runs (id, job, command, contracts, chain_id) VALUES ($1, 'group', 'run', '{}', 1)`, [RUN]);
    const first = chain.transfers.reduce((m, t) => Math.min(m, t.blockNumber), Infinity);
    const last = chain.transfers.reduce((m, t) => Math.max(m, t.blockNumber), 0);
    const ranges: RangeState[] = [];
    for (const contract of contracts) {
      const range = await createRange(target.warehouse.db, {
        chainId: 1,
        job: 'group',
        contract,
        fromBlock: first,
        toBlock: last,
        runId: RUN,
        chunks: [{ fromBlock: first, toBlock: last }],
      });
      range.chunks[0]!.fresh = true;
      ranges.push(range);
    }
    return ranges;
  };
  const stored = async () => (await target.warehouse.db.selectFrom('token_transfers').selectAll().execute()).map(rowToTransfer);
  const chunkRows = async () =>
    (await target.warehouse.db.selectFrom('export_chunks').select(['id', 'page_key', 'resume_to_block', 'done', 'pages', 'rows']).orderBy('id').execute()).map((c) => ({
      ...c,
      resume_to_block: Number(c.resume_to_block),
      pages: Number(c.pages),
      rows: Number(c.rows),
    }));
  const sorted = (rows: readonly TransferRecord[]) =>
    [...rows].sort((a, b) => (a.transactionHash < b.transactionHash ? -1 : a.transactionHash > b.transactionHash ? 1 : a.logIndex - b.logIndex));
  const scopeOf = (range: RangeState) => ({ job: 'group', contract: range.contract, chunk: range.chunks[0]! });
  /** The run's row counts: what its committed pages added, with no ledger summing them into its export_runs row. */
  const runCounts = async () => {
    const { rows } = await target.warehouse.pool.query<{ inserted: number; updated: number; unchanged: number }>(
      `SELECT coalesce(sum(rows_inserted), 0)::int AS inserted, coalesce(sum(rows_updated), 0)::int AS updated, coalesce(sum(rows_unchanged), 0)::int AS unchanged
       FROM export_run_rows WHERE run_id = $1`,
      [RUN],
    );
    return rows[0];
  };

  /** Every page of both chunks into one group, the chunks' pages interleaved; resolves to the commits, in order. */
  const addAll = async (group: ReturnType<typeof openCopyGroup>, ranges: RangeState[], size = 50): Promise<Promise<MergeCounts>[]> => {
    const lists = ranges.map((r) => pagesOf(r, rowsOf(r.contract), size));
    const committed: Promise<MergeCounts>[] = [];
    for (let i = 0; i < Math.max(...lists.map((l) => l.length)); i++) {
      for (const [k, list] of lists.entries()) {
        if (i >= list.length) continue;
        const page: GroupedPage = await group.add(list[i]!, scopeOf(ranges[k]!));
        committed.push(page.committed);
      }
    }
    return committed;
  };

  it('commits the pages of several chunks together, each chunk moved to the position after its last page', async () => {
    const ranges = await freshRanges();
    const group = openCopyGroup(target.warehouse, { logger: quiet, clock: systemClock }, { maxRows: 1_000_000, maxAgeMs: 60_000 });
    const committed = await addAll(group, ranges);
    // written, not committed: another connection sees neither the rows nor the positions, nor the run's counts
    expect(await stored()).toEqual([]);
    expect((await chunkRows()).every((c) => c.pages === 0 && c.page_key === null)).toBe(true);
    expect(await runCounts()).toEqual({ inserted: 0, updated: 0, unchanged: 0 });
    await group.close();
    expect(await runCounts()).toEqual({ inserted: chain.transfers.length, updated: 0, unchanged: 0 });
    const counts = await Promise.all(committed);
    expect(counts.reduce((n, c) => n + c.inserted, 0)).toBe(chain.transfers.length);
    expect(counts.every((c) => c.updated === 0 && c.unchanged === 0)).toBe(true);
    expect(sorted(await stored())).toEqual(sorted(chain.transfers));
    const expected = ranges.map((r) => {
      const pages = pagesOf(r, rowsOf(r.contract), 50);
      return { id: r.chunks[0]!.id, page_key: null, resume_to_block: pages.at(-1)!.checkpoint.resumeToBlock, done: true, pages: pages.length, rows: rowsOf(r.contract).length };
    });
    expect(await chunkRows()).toEqual(expected);
  });

  it("the run's lanes: a chunk takes the lane the fewest chunks write into, one let go of is taken next, and closing them commits every page", async () => {
    const lanes = openCopyLanes(target.warehouse, { logger: quiet, clock: systemClock }, { commitRows: 1_000_000, concurrency: 4, maxAgeMs: 60_000 });
    const a = lanes.take();
    const b = lanes.take();
    const c = lanes.take();
    expect(b.group).not.toBe(a.group);
    expect(c.group).toBe(a.group);
    // let go of twice, counted once: the lanes now hold two chunks and none
    b.release();
    b.release();
    const d = lanes.take();
    expect(d.group).toBe(b.group);
    const e = lanes.take();
    expect(e.group).toBe(b.group);
    const f = lanes.take();
    expect(f.group).toBe(a.group);
    // a run reading one chunk at a time has one lane
    const alone = openCopyLanes(target.warehouse, { logger: quiet, clock: systemClock }, { commitRows: 1_000_000, concurrency: 1, maxAgeMs: 60_000 });
    expect(alone.take().group).toBe(alone.take().group);
    await alone.close();
    // each contract's chunk through a lane of its own: written, then committed by the close
    const ranges = await freshRanges();
    const committed = [...(await addAll(a.group, [ranges[0]!])), ...(await addAll(d.group, [ranges[1]!]))];
    expect(await stored()).toEqual([]);
    await lanes.close();
    expect((await Promise.all(committed)).reduce((n, counts) => n + counts.inserted, 0)).toBe(chain.transfers.length);
    expect(sorted(await stored())).toEqual(sorted(chain.transfers));
    expect((await chunkRows()).every((chunk) => chunk.done)).toBe(true);
  });

  it('commits when the open transaction holds maxRows rows, so a stop loses only what came after', async () => {
    const ranges = await freshRanges();
    const group = openCopyGroup(target.warehouse, { logger: quiet, clock: systemClock }, { maxRows: 120, maxAgeMs: 60_000 });
    const [range] = ranges;
    const pages = pagesOf(range!, rowsOf(range!.contract), 50);
    let committedRows = 0;
    let third: Promise<MergeCounts> | undefined;
    for (const page of pages.slice(0, 3)) {
      third = (await group.add(page, scopeOf(range!))).committed;
      committedRows += page.rows.length;
    }
    // the third page took the transaction past 120 rows: it committed with the chunk at the third page's position
    await third;
    const [chunk] = (await chunkRows()).filter((c) => c.id === range!.chunks[0]!.id);
    expect(chunk).toMatchObject({ pages: 3, rows: committedRows, page_key: pages[2]!.checkpoint.pageKey, resume_to_block: pages[2]!.checkpoint.resumeToBlock });
    expect((await stored()).length).toBe(committedRows);
    await group.close();
  });

  it('a page that comes while the transaction the clock sealed is still committing waits for that commit, and every page lands once', async () => {
    const ranges = await freshRanges();
    // a transaction is sealed by its timer 2 ms after it opens; pages come 3 ms apart, so most find it committing
    const group = openCopyGroup(target.warehouse, { logger: quiet, clock: systemClock }, { maxRows: 1_000_000, maxAgeMs: 2 });
    const lists = ranges.map((r) => pagesOf(r, rowsOf(r.contract), 20));
    const committed: Promise<MergeCounts>[] = [];
    for (let i = 0; i < Math.max(...lists.map((l) => l.length)); i++) {
      for (const [k, list] of lists.entries()) {
        if (i >= list.length) continue;
        committed.push((await group.add(list[i]!, scopeOf(ranges[k]!))).committed);
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
    }
    await group.close();
    const counts = await Promise.all(committed);
    expect(counts.reduce((n, c) => n + c.inserted, 0)).toBe(chain.transfers.length);
    expect(sorted(await stored())).toEqual(sorted(chain.transfers));
    expect((await chunkRows()).map((c) => [c.done, c.rows])).toEqual(ranges.map((r) => [true, rowsOf(r.contract).length]));
  }, 30_000);

  it('gives its connection back with the page session reset, so the next statement on it runs with the server’s settings', async () => {
    const ranges = await freshRanges();
    // one connection in the pool: what the group gives back is what the next user gets
    const pool = new pg.Pool({ connectionString: target.url, max: 1 });
    // the server's own settings (a test server may run with synchronous_commit off); the page session sets others
    const settings = async () =>
      (
        await pool.query<{ synchronous_commit: string; enable_seqscan: string; enable_hashjoin: string }>(
          "SELECT current_setting('synchronous_commit') AS synchronous_commit, current_setting('enable_seqscan') AS enable_seqscan, current_setting('enable_hashjoin') AS enable_hashjoin",
        )
      ).rows[0];
    try {
      const before = await settings();
      expect(before).toMatchObject({ enable_seqscan: 'on', enable_hashjoin: 'on' });
      const group = openCopyGroup({ ...target.warehouse, pool }, { logger: quiet, clock: systemClock }, { maxRows: 1_000_000, maxAgeMs: 60_000 });
      const [page] = pagesOf(ranges[0]!, rowsOf(ranges[0]!.contract), 50);
      const { committed } = await group.add(page!, scopeOf(ranges[0]!));
      await group.close();
      expect(await committed).toMatchObject({ inserted: page!.rows.length });
      expect(await settings()).toEqual(before);
    } finally {
      await pool.end();
    }
  });

  it('when a row of one chunk is there already, writes the pages again one by one: that chunk merges, the other copies, nothing is lost or doubled', async () => {
    const ranges = await freshRanges();
    // another job stored two rows of the second contract meanwhile (one of them stale)
    const [theirs] = [rowsOf(ranges[1]!.contract)];
    const before = [theirs![10]!, { ...theirs![20]!, value: '1' }];
    const client = await target.warehouse.pool.connect();
    await copyTransfers(client, 'token_transfers', before, ['chain_id', 'inserted_by_run', 'updated_by_run'], '1\t9\t9');
    client.release();
    const log = captureLogger();
    const group = openCopyGroup(target.warehouse, { logger: log.logger, clock: systemClock }, { maxRows: 1_000_000, maxAgeMs: 60_000 });
    const committed = await addAll(group, ranges);
    await group.close();
    const counts = await Promise.all(committed);
    expect(counts.reduce((n, c) => n + c.inserted, 0)).toBe(chain.transfers.length - 2);
    expect(counts.reduce((n, c) => n + c.updated, 0)).toBe(1);
    expect(counts.reduce((n, c) => n + c.unchanged, 0)).toBe(1);
    expect(sorted(await stored())).toEqual(sorted(chain.transfers));
    expect(ranges[0]!.chunks[0]!.fresh).toBe(true);
    expect(ranges[1]!.chunks[0]!.fresh).toBe(false);
    expect(log.text()).toContain('a transaction of several pages failed; writing its pages again one by one');
    expect((await chunkRows()).map((c) => [c.done, c.rows])).toEqual(ranges.map((r) => [true, rowsOf(r.contract).length]));
    // the failed transaction added nothing to the run; the pages written again added what each did
    expect(await runCounts()).toEqual({ inserted: chain.transfers.length - 2, updated: 1, unchanged: 1 });
  });

  /**
   * Another job stored a row of a chunk's first page, and one in its second page's blocks that the chain no longer has
   * (the ghost); resolves to the second page's blocks (its interior) and the ghost.
   */
  const storedByAnother = async (first: Omit<PageLoad, 'mode'>, second: Omit<PageLoad, 'mode'>) => {
    const blocks = second.rows.map((r) => r.blockNumber);
    const interior = { fromBlock: Math.min(...blocks), toBlock: Math.max(...blocks) };
    const ghost = { ...second.rows[0]!, transactionHash: `0x${'ab'.repeat(32)}` };
    const client = await target.warehouse.pool.connect();
    await copyTransfers(client, 'token_transfers', [first.rows[0]!, ghost], ['chain_id', 'inserted_by_run', 'updated_by_run'], '1\t9\t9');
    client.release();
    return { interior, ghost };
  };

  it('a page that comes after its chunk was found not fresh (a page written again met a stored row) is merged, so rows its blocks no longer hold are recorded', async () => {
    const [range] = await freshRanges();
    const pages = pagesOf(range!, rowsOf(range!.contract), 50);
    const [first, second] = [pages[0]!, pages[1]!];
    const { interior, ghost } = await storedByAnother(first, second);
    // the clock seals the first page's transaction, whose COPY fails on the stored row; the second page's add finds that out
    const group = openCopyGroup(target.warehouse, { logger: quiet, clock: systemClock }, { maxRows: 1_000_000, maxAgeMs: 20 });
    const one = await group.add(first, scopeOf(range!));
    await new Promise((r) => setTimeout(r, 300));
    const two = await group.add({ ...second, interior }, scopeOf(range!));
    await group.close();
    expect(await one.committed).toEqual({ inserted: first.rows.length - 1, updated: 0, unchanged: 1 });
    expect(await two.committed).toEqual({ inserted: second.rows.length, updated: 0, unchanged: 0 });
    expect(range!.chunks[0]!.fresh).toBe(false);
    const missing = await target.warehouse.db.selectFrom('export_missing').select(['transaction_hash', 'range_id']).execute();
    expect(missing).toEqual([{ transaction_hash: ghost.transactionHash, range_id: range!.id }]);
  });

  it("a chunk found not fresh while another chunk's transaction is open in the lane has its next page merged, not copied into that transaction", async () => {
    const ranges = await freshRanges();
    const [a, b] = ranges.map((r) => pagesOf(r, rowsOf(r.contract), 50));
    const [first, second] = [a![0]!, a![1]!];
    const { interior, ghost } = await storedByAnother(first, second);
    const group = openCopyGroup(target.warehouse, { logger: quiet, clock: systemClock }, { maxRows: 1_000_000, maxAgeMs: 500 });
    // the clock seals the first chunk's transaction, whose COPY fails on the stored row
    const one = await group.add(first, scopeOf(ranges[0]!));
    await new Promise((r) => setTimeout(r, 800));
    // the other chunk's page finds that out: the first page is written again (merged: its chunk is not fresh now), and
    // the other chunk opens the next transaction, which is still open when the first chunk's next page comes
    const other = await group.add(b![0]!, scopeOf(ranges[1]!));
    expect(ranges[0]!.chunks[0]!.fresh).toBe(false);
    const two = await group.add({ ...second, interior }, scopeOf(ranges[0]!));
    await group.close();
    expect(await one.committed).toEqual({ inserted: first.rows.length - 1, updated: 0, unchanged: 1 });
    expect(await two.committed).toEqual({ inserted: second.rows.length, updated: 0, unchanged: 0 });
    expect(await other.committed).toEqual({ inserted: b![0]!.rows.length, updated: 0, unchanged: 0 });
    const missing = await target.warehouse.db.selectFrom('export_missing').select(['transaction_hash', 'range_id']).execute();
    expect(missing).toEqual([{ transaction_hash: ghost.transactionHash, range_id: ranges[0]!.id }]);
  });

  it('once a page cannot be written even on its own, refuses every later page, so no chunk moves past a page it lacks', async () => {
    const ranges = await freshRanges();
    const log = captureLogger();
    const group = openCopyGroup(target.warehouse, { logger: log.logger, clock: systemClock }, { maxRows: 1_000_000, maxAgeMs: 60_000 });
    const [a, b] = ranges.map((r) => pagesOf(r, rowsOf(r.contract), 50));
    // a row PostgreSQL refuses for good (value >= 0 is a CHECK of the table): its page fails in the group and alone
    const bad = { ...a![0]!, rows: a![0]!.rows.map((row, i) => (i === 3 ? { ...row, value: '-5' } : row)) };
    const first = (await group.add(bad, scopeOf(ranges[0]!))).committed;
    const second = (await group.add(b![0]!, scopeOf(ranges[1]!))).committed;
    await group.flush();
    await expect(first).rejects.toThrow(/check constraint/);
    await expect(second).rejects.toThrow(/check constraint/);
    // the other chunk's next page is refused, not written: its position stays before the page it lacks
    await expect(group.add(b![1]!, scopeOf(ranges[1]!))).rejects.toThrow(/check constraint/);
    await group.close();
    expect(await stored()).toEqual([]);
    expect((await chunkRows()).map((c) => [c.pages, c.rows, c.page_key])).toEqual([
      [0, 0, null],
      [0, 0, null],
    ]);
  });

  it('when its connection is lost, writes the open pages again on a new one', async () => {
    const ranges = await freshRanges();
    const group = openCopyGroup(target.warehouse, { logger: quiet, clock: systemClock }, { maxRows: 1_000_000, maxAgeMs: 60_000 });
    const lists = ranges.map((r) => pagesOf(r, rowsOf(r.contract), 50));
    const committed: Promise<MergeCounts>[] = [];
    for (const page of lists[0]!.slice(0, 2)) committed.push((await group.add(page, scopeOf(ranges[0]!))).committed);
    // the server ends the backend that holds the open COPY
    const killed = await target.warehouse.pool.query<{ n: number }>(
      "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'COPY token_transfers%' AND pid <> pg_backend_pid()",
    );
    expect(killed.rows[0]!.n).toBe(1);
    for (const page of [...lists[0]!.slice(2), ...lists[1]!]) committed.push((await group.add(page, scopeOf(ranges[page.contract === ranges[0]!.contract ? 0 : 1]!))).committed);
    await group.close();
    await Promise.all(committed);
    expect(sorted(await stored())).toEqual(sorted(chain.transfers));
    expect((await chunkRows()).map((c) => [c.done, c.rows])).toEqual(ranges.map((r) => [true, rowsOf(r.contract).length]));
  });

  /** Every row of the chain stored and reported as inserted once; each chunk, and the run, count each page once. */
  const expectEveryRowOnce = async (ranges: readonly RangeState[], counts: readonly MergeCounts[]) => {
    expect(counts.reduce((n, c) => n + c.inserted, 0)).toBe(chain.transfers.length);
    expect(sorted(await stored())).toEqual(sorted(chain.transfers));
    const expected = ranges.map((r) => [pagesOf(r, rowsOf(r.contract), 50).length, rowsOf(r.contract).length, true]);
    expect((await chunkRows()).map((c) => [c.pages, c.rows, c.done])).toEqual(expected);
    expect(await runCounts()).toEqual({ inserted: chain.transfers.length, updated: 0, unchanged: 0 });
  };
  /** The range's first page, written on its own through `pool` by a chunk's page writer. */
  const writeFirstPageAlone = async (range: RangeState, pool: pg.Pool) => {
    const [page] = pagesOf(range, rowsOf(range.contract), 50);
    const writer = openPageWriter({ ...target.warehouse, pool }, { logger: quiet, clock: systemClock }, scopeOf(range));
    const counts = await writer.write(page!);
    await writer.close();
    return { range, page: page!, counts };
  };
  /** The one page written, stored and reported as inserted once, and counted once in its chunk and its run. */
  const expectPageOnce = async ({ range, page, counts }: { range: RangeState; page: Omit<PageLoad, 'mode'>; counts: MergeCounts }) => {
    expect(counts).toEqual({ inserted: page.rows.length, updated: 0, unchanged: 0 });
    expect(sorted(await stored())).toEqual(sorted(page.rows));
    const [chunk] = (await chunkRows()).filter((c) => c.id === range.chunks[0]!.id);
    expect(chunk).toMatchObject({ pages: 1, rows: page.rows.length, page_key: page.checkpoint.pageKey });
    expect(await runCounts()).toEqual({ inserted: page.rows.length, updated: 0, unchanged: 0 });
  };

  it('when a COMMIT committed but its answer was lost, does not write its pages again: every row is stored once and each chunk counts its pages once', async () => {
    const ranges = await freshRanges();
    const pool = poolLosingFirstCommitAnswer(target.url);
    try {
      // three pages of 50 take the first transaction past 120 rows: its COMMIT is the one whose answer is lost
      const group = openCopyGroup({ ...target.warehouse, pool }, { logger: quiet, clock: systemClock }, { maxRows: 120, maxAgeMs: 60_000 });
      const committed = await addAll(group, ranges.slice(0, 1));
      const more = await addAll(group, ranges.slice(1));
      await group.close();
      const counts = await Promise.all([...committed, ...more]);
      await expectEveryRowOnce(ranges, counts);
    } finally {
      await pool.end();
    }
  });

  it('a page written on its own whose COMMIT answer was lost is retried, counted once in its chunk, and reported as inserted', async () => {
    const ranges = await freshRanges();
    const pool = poolLosingFirstCommitAnswer(target.url);
    try {
      // the run ledger counts what the page did: its rows went in with the COMMIT whose answer was lost
      await expectPageOnce(await writeFirstPageAlone(ranges[0]!, pool));
    } finally {
      await pool.end();
    }
  });

  /**
   * `pool`, whose question after a lost COMMIT answer (does each chunk stand where the transaction moved it?) fails
   * every time, as when the server is still starting up after a crash.
   */
  const unreadableAfterCommit = (pool: pg.Pool): pg.Pool => {
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) =>
      typeof args[0] === 'string' && args[0].includes('FROM export_chunks c JOIN jsonb_to_recordset')
        ? Promise.reject(Object.assign(new Error('the database system is starting up'), { code: '57P03' }))
        : query(...args);
    return pool;
  };
  /** A clock whose waits end at once: the writers' retries are tried through without waiting. */
  const hurried = { now: () => Date.now(), sleep: () => Promise.resolve() };

  it('when a COMMIT’s answer was lost and the warehouse cannot tell whether it committed, writes nothing again and fails its pages and the later ones, saying to run again', async () => {
    const ranges = await freshRanges();
    const pool = unreadableAfterCommit(poolLosingFirstCommitAnswer(target.url));
    try {
      // three pages of 50 take the first transaction past 120 rows: its COMMIT is the one whose answer is lost
      const group = openCopyGroup({ ...target.warehouse, pool }, { logger: quiet, clock: hurried }, { maxRows: 120, maxAgeMs: 60_000 });
      const pages = pagesOf(ranges[0]!, rowsOf(ranges[0]!.contract), 50);
      const committed: Promise<MergeCounts>[] = [];
      const refused: unknown[] = [];
      for (const page of pages) {
        try {
          committed.push((await group.add(page, scopeOf(ranges[0]!))).committed);
        } catch (err) {
          refused.push(err);
        }
      }
      await group.close().catch(() => undefined);
      const outcomes = await Promise.allSettled(committed);
      const failed = [...outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as Error] : [])), ...(refused as Error[])];
      // the first transaction held the first three pages; nothing after them is taken or written
      expect(outcomes.slice(0, 3).map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(failed).toHaveLength(pages.length);
      expect(failed[0]!.message).toMatch(/whether it committed is unknown.*run the job again/is);
      // what committed stands once: the first transaction's rows, its chunk where it moved it, counted once
      const first = pages.slice(0, 3);
      expect(sorted(await stored())).toEqual(sorted(first.flatMap((p) => p.rows)));
      const [chunk] = await chunkRows();
      expect(chunk).toMatchObject({ pages: 3, rows: first.reduce((n, p) => n + p.rows.length, 0), page_key: first[2]!.checkpoint.pageKey });
      expect(await runCounts()).toEqual({ inserted: first.reduce((n, p) => n + p.rows.length, 0), updated: 0, unchanged: 0 });
    } finally {
      await pool.end();
    }
  });

  it('a page written on its own whose COMMIT answer was lost, when the warehouse cannot tell whether it committed: fails, saying to run again, and is counted once', async () => {
    const ranges = await freshRanges();
    const pool = unreadableAfterCommit(poolLosingFirstCommitAnswer(target.url));
    try {
      const [page] = pagesOf(ranges[0]!, rowsOf(ranges[0]!.contract), 50);
      const writer = openPageWriter({ ...target.warehouse, pool }, { logger: quiet, clock: hurried }, scopeOf(ranges[0]!));
      const written = await writer
        .write(page!)
        .finally(() => writer.close())
        .then(
          (counts) => ({ counts }),
          (error: Error) => ({ error }),
        );
      expect(written).toEqual({ error: expect.objectContaining({ message: expect.stringMatching(/whether it committed is unknown.*run the job again/is) }) });
      expect(sorted(await stored())).toEqual(sorted(page!.rows));
      const [chunk] = (await chunkRows()).filter((c) => c.id === ranges[0]!.chunks[0]!.id);
      expect(chunk).toMatchObject({ pages: 1, rows: page!.rows.length, page_key: page!.checkpoint.pageKey });
      expect(await runCounts()).toEqual({ inserted: page!.rows.length, updated: 0, unchanged: 0 });
    } finally {
      await pool.end();
    }
  });

  /** A chunk whose first three pages another writer (the one that took it over) has committed, and where it stood then. */
  const takenOver = async () => {
    const ranges = await freshRanges();
    const range = ranges[0]!;
    const pages = pagesOf(range, rowsOf(range.contract), 50);
    const current = openPageWriter(target.warehouse, { logger: quiet, clock: systemClock }, scopeOf(range));
    for (const page of pages.slice(0, 3)) await current.write(page);
    await current.close();
    return { range, pages, before: await chunkRows(), counts: await runCounts() };
  };
  /** A stale writer's page of `range`'s chunk, given to a group of its own as a fresh chunk's: resolves once the group is closed. */
  const addStale = async (range: RangeState, page: Omit<PageLoad, 'mode'>) => {
    const group = openCopyGroup(target.warehouse, { logger: quiet, clock: systemClock }, { maxRows: 1_000, maxAgeMs: 60_000 });
    const { committed } = await group.add(page, { ...scopeOf(range), chunk: { ...range.chunks[0]!, fresh: true } });
    await group.close();
    return committed;
  };

  it('a writer whose chunk another writer has read on since writes nothing, neither moving it back nor counting its page again, and stops with a message', async () => {
    const { range, pages, before, counts } = await takenOver();
    // a stale writer comes back with its second page, on its own and in a group
    const stale = openPageWriter(target.warehouse, { logger: quiet, clock: systemClock }, { ...scopeOf(range), chunk: { ...range.chunks[0]!, fresh: false } });
    await expect(stale.write(pages[1]!)).rejects.toThrow(/moved on without this writer/);
    await stale.close();
    await expect(addStale(range, pages[1]!)).rejects.toThrow(/moved on without this writer/);
    expect(await chunkRows()).toEqual(before);
    expect(before[0]).toMatchObject({ pages: 3, page_key: pages[2]!.checkpoint.pageKey });
    expect(await runCounts()).toEqual(counts);
    expect(sorted(await stored())).toEqual(sorted(pages.slice(0, 3).flatMap((p) => p.rows)));
  });

  it('a transaction holding a page whose chunk another writer has moved, its rows stored nowhere, commits none of its rows and stops with a message', async () => {
    const { range, pages, before, counts } = await takenOver();
    // the stale writer's second page holds rows the warehouse does not: its COPY goes through, and only the statement
    // that moves the chunks finds the chunk elsewhere (a chunk moved back by the other writer, say)
    const unstored = { ...pages[1]!, rows: pages[1]!.rows.map((r, i) => ({ ...r, transactionHash: `0x${i.toString(16).padStart(64, 'e')}` })) };
    await expect(addStale(range, unstored)).rejects.toThrow(/moved on without this writer/);
    expect(sorted(await stored())).toEqual(sorted(pages.slice(0, 3).flatMap((p) => p.rows)));
    expect(await chunkRows()).toEqual(before);
    expect(await runCounts()).toEqual(counts);
  });

  /** How many of these backends the server still runs. */
  const alive = async (pids: readonly number[]) =>
    (await target.warehouse.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1::int[])', [pids])).rows[0]!.n;

  it('when a COMMIT never reached the server, whose side of the connection stays open, ends that backend, then writes the pages again without waiting on its locks', async () => {
    const ranges = await freshRanges();
    const { pool, stranded } = poolStrandingFirstCommit(target.url);
    try {
      // three pages of 50 take the first transaction past 120 rows: its COMMIT is the one that never arrives
      const group = openCopyGroup({ ...target.warehouse, pool }, { logger: quiet, clock: systemClock }, { maxRows: 120, maxAgeMs: 60_000 });
      const committed = await addAll(group, ranges);
      await group.close();
      const counts = await Promise.all(committed);
      expect(stranded).toHaveLength(1);
      expect(await alive(stranded.map((s) => s.pid))).toBe(0);
      await expectEveryRowOnce(ranges, counts);
    } finally {
      for (const s of stranded) s.socket.destroy();
      await pool.end();
    }
  });

  it('a page written on its own whose COMMIT never reached the server: its backend is ended, and the page written again once', async () => {
    const ranges = await freshRanges();
    const { pool, stranded } = poolStrandingFirstCommit(target.url);
    try {
      const written = await writeFirstPageAlone(ranges[0]!, pool);
      expect(stranded).toHaveLength(1);
      expect(await alive(stranded.map((s) => s.pid))).toBe(0);
      await expectPageOnce(written);
    } finally {
      for (const s of stranded) s.socket.destroy();
      await pool.end();
    }
  });

  describe("a run's row counts, added in its pages' transactions", () => {
    /** The chunk's position and counts as they stand, to put back. */
    const positionOf = async (chunkId: string) =>
      (await target.warehouse.pool.query('SELECT page_key, resume_to_block, done, pages, rows, open_hashes, open_log_indexes FROM export_chunks WHERE id = $1', [chunkId]))
        .rows[0] as Record<string, unknown>;
    const putBack = async (chunkId: string, position: Record<string, unknown>) => {
      await target.warehouse.pool.query(
        'UPDATE export_chunks SET page_key = $2, resume_to_block = $3, done = $4, pages = $5, rows = $6, open_hashes = $7, open_log_indexes = $8 WHERE id = $1',
        [chunkId, position.page_key, position.resume_to_block, position.done, position.pages, position.rows, position.open_hashes, position.open_log_indexes],
      );
      await target.warehouse.pool.query('DELETE FROM export_run_rows');
    };
    /** Resolves once `n` statements of this database wait for a lock; fails after 10 s. */
    const lockWaiters = async (n: number) => {
      for (const until = Date.now() + 10_000; ; ) {
        if (Date.now() > until) throw new Error(`fewer than ${n} statements waited for a lock within 10 s`);
        const { rows } = await target.warehouse.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        if (rows[0]!.n >= n) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    };

    // the page's rows are in the warehouse already, as a re-run finds them: `checkpoint` writes them again in a
    // transaction whose last statement moves the chunk; `held` finds them by digest and only moves the chunk
    it.each(['checkpoint', 'held'] as const)('two writers of one page at once (%s) count it once in its run', async (path) => {
      const [range] = await freshRanges();
      const [page] = pagesOf(range!, rowsOf(range!.contract), 50);
      const chunkId = range!.chunks[0]!.id;
      const start = await positionOf(chunkId);
      const blocks = page!.rows.map((r) => r.blockNumber);
      const load: PageLoad = { ...page!, mode: 'merge', interior: path === 'held' ? { fromBlock: Math.min(...blocks), toBlock: Math.max(...blocks) } : null };
      const clients = await Promise.all([0, 1, 2].map(() => target.warehouse.pool.connect()));
      try {
        expect(await loadPage(clients[0]!, { ...load, mode: 'copy' })).toEqual({ inserted: page!.rows.length, updated: 0, unchanged: 0 });
        expect(await runCounts()).toEqual({ inserted: page!.rows.length, updated: 0, unchanged: 0 });
        await putBack(chunkId, start);
        // a third connection holds the chunk's row: both writers reach the statement that moves it, and wait there
        const holder = clients[2]!;
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM export_chunks WHERE id = $1 FOR UPDATE', [chunkId]);
        const writes = [loadPage(clients[0]!, load), loadPage(clients[1]!, load)];
        await lockWaiters(2);
        await holder.query('COMMIT');
        const counts = await Promise.all(writes);
        for (const c of counts) expect(c).toEqual({ inserted: 0, updated: 0, unchanged: page!.rows.length });
        expect(await runCounts()).toEqual({ inserted: 0, updated: 0, unchanged: page!.rows.length });
        expect(await positionOf(chunkId)).toMatchObject({ pages: 1, rows: String(page!.rows.length), page_key: page!.checkpoint.pageKey });
      } finally {
        for (const c of clients) c.release();
      }
    });

    it('asks whether the warehouse holds a page with a statement prepared once per connection, and again finds it held', async () => {
      const [range] = await freshRanges();
      const [page] = pagesOf(range!, rowsOf(range!.contract), 50);
      const chunkId = range!.chunks[0]!.id;
      const start = await positionOf(chunkId);
      const blocks = page!.rows.map((r) => r.blockNumber);
      const load: PageLoad = { ...page!, mode: 'merge', interior: { fromBlock: Math.min(...blocks), toBlock: Math.max(...blocks) } };
      const client = await target.warehouse.pool.connect();
      const prepared = async () =>
        (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%WITH warehouse AS%'`)).rows[0]!.n;
      try {
        expect(await loadPage(client, { ...load, mode: 'copy' })).toEqual({ inserted: page!.rows.length, updated: 0, unchanged: 0 });
        for (let i = 0; i < 3; i++) {
          await putBack(chunkId, start);
          expect(await loadPage(client, load)).toEqual({ inserted: 0, updated: 0, unchanged: page!.rows.length });
          expect(await prepared()).toBe(1);
        }
        expect(await positionOf(chunkId)).toMatchObject({ pages: 1, page_key: page!.checkpoint.pageKey });
      } finally {
        client.release();
      }
    });

    it("two transactions moving one chunk over the same pages at once (the group writer's statement) count them once in its run", async () => {
      const [range] = await freshRanges();
      const pages = pagesOf(range!, rowsOf(range!.contract), 50).slice(0, 2);
      const chunkId = range!.chunks[0]!.id;
      const rows = pages.reduce((n, p) => n + p.rows.length, 0);
      const clients = await Promise.all([0, 1, 2].map(() => target.warehouse.pool.connect()));
      try {
        // a third connection holds the chunk's row: both transactions reach the statement that moves it, and wait there
        const holder = clients[2]!;
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM export_chunks WHERE id = $1 FOR UPDATE', [chunkId]);
        const moves = clients.slice(0, 2).map(async (c) => {
          await c.query('BEGIN');
          await moveChunks(c, pages);
          await c.query('COMMIT');
        });
        await lockWaiters(2);
        await holder.query('COMMIT');
        await Promise.all(moves);
        expect(await runCounts()).toEqual({ inserted: rows, updated: 0, unchanged: 0 });
        expect(await positionOf(chunkId)).toMatchObject({ pages: 2, rows: String(rows), page_key: pages[1]!.checkpoint.pageKey });
      } finally {
        for (const c of clients) c.release();
      }
    });

    it('a run ends with the counts its pages added; a run with none there keeps its own', async () => {
      const ranges = await freshRanges();
      const group = openCopyGroup(target.warehouse, { logger: quiet, clock: systemClock }, { maxRows: 1_000_000, maxAgeMs: 60_000 });
      const committed = await addAll(group, ranges);
      await group.close();
      await Promise.all(committed);
      // the ledger wrote an older sum, from before the last pages: the pages' sum replaces it
      await target.warehouse.pool.query('UPDATE export_runs SET rows_inserted = 5 WHERE id = $1', [RUN]);
      await target.warehouse.pool.query(`INSERT INTO export_runs (id, job, command, contracts, chain_id, rows_inserted, rows_updated) VALUES (2, 'older', 'run', '{}', 1, 11, 3)`);
      await endRun(target.warehouse.db, RUN, { status: 'succeeded' });
      await endRun(target.warehouse.db, '2', { status: 'failed', error: 'killed' });
      const runs = await target.warehouse.db.selectFrom('export_runs').select(['id', 'rows_inserted', 'rows_updated', 'rows_unchanged']).orderBy('id').execute();
      expect(runs.map((r) => [r.id, Number(r.rows_inserted), Number(r.rows_updated), Number(r.rows_unchanged)])).toEqual([
        [RUN, chain.transfers.length, 0, 0],
        ['2', 11, 3, 0],
      ]);
      // a page committed after its run ended (a queued run failed while another task still wrote): the report counts it
      await target.warehouse.pool.query('UPDATE export_run_rows SET rows_inserted = rows_inserted + 4 WHERE run_id = $1 AND chunk_id = $2', [RUN, ranges[0]!.chunks[0]!.id]);
      const latest = await latestRuns(target.warehouse.db, 5);
      expect(latest.map((r) => [r.id, Number(r.rowsInserted), Number(r.rowsUpdated)])).toEqual([
        ['2', 11, 3],
        [RUN, chain.transfers.length + 4, 0],
      ]);
    });
  });
});
