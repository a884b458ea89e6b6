import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'kysely';
import { createRange, type RangeState } from '../src/warehouse/ranges.ts';
import pg from 'pg';
import { ATTEMPT_QUERY, committedAttempt, commitTrace, tracedTransaction, type CommitAttempt } from '../src/warehouse/commit-trace.ts';
import { pino } from 'pino';
import { LookupIndexesPending, reconcileRanges } from '../src/warehouse/reconcile.ts';
import { emptyTotals, startRun } from '../src/warehouse/runs.ts';
import { closeRanges } from '../src/pipeline/chunk-runner.ts';
import { systemClock } from '../src/common/clock.ts';
import { job, migratedWarehouse } from './helpers/exporter.ts';

const CONTRACTS = ['0x1111111111111111111111111111111111111111', '0x2222222222222222222222222222222222222222', '0x3333333333333333333333333333333333333333'];

/** Rows of three contracts on two chains: contract i logs in every block whose number is divisible by i + 1. */
function rowsOf(chainId: number) {
  const rows = [];
  for (let block = 100; block < 400; block++) {
    for (const [i, contract] of CONTRACTS.entries()) {
      if (block % (i + 1) !== 0) continue;
      rows.push({
        chain_id: String(chainId),
        transaction_hash: `0x${block.toString(16).padStart(60, '0')}${i.toString().padStart(4, '0')}`,
        log_index: i,
        contract_address: contract,
        from_address: CONTRACTS[0]!,
        to_address: CONTRACTS[1]!,
        value: '1',
        block_number: String(block),
        block_hash: `0x${block.toString(16).padStart(64, '0')}`,
        block_timestamp: new Date(1_700_000_000_000 + block * 12_000),
        transaction_index: 0,
        inserted_by_run: '1',
        updated_by_run: '1',
      });
    }
  }
  return rows;
}

describe('closing finished ranges', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    target = await migratedWarehouse('reconcile_counts');
    for (const chainId of [1, 2]) await target.warehouse.db.insertInto('token_transfers').values(rowsOf(chainId)).execute();
  });
  afterAll(async () => {
    await target.drop();
  });

  it("records each range's own row count when many ranges of several contracts and chains close together", async () => {
    const db = target.warehouse.db;
    const runId = await startRun(db, { chainId: 1, job: 'counts', command: 'test', contracts: CONTRACTS });
    // 70 ranges: contracts, chains and overlapping spans mixed
    const planned: { chainId: number; contract: string; fromBlock: number; toBlock: number }[] = [];
    for (let i = 0; i < 70; i++) {
      const fromBlock = 90 + ((i * 37) % 290);
      planned.push({ chainId: i % 5 === 4 ? 2 : 1, contract: CONTRACTS[i % 3]!, fromBlock, toBlock: fromBlock + (i % 7) * 13 });
    }
    planned.push({ chainId: 3, contract: CONTRACTS[0]!, fromBlock: 100, toBlock: 399 }); // a chain with no rows
    const ranges: RangeState[] = [];
    for (const [i, p] of planned.entries()) ranges.push(await createRange(db, { ...p, job: `counts-${i}`, runId, chunks: [{ fromBlock: p.fromBlock, toBlock: p.toBlock }] }));

    const results = await reconcileRanges(db, ranges, runId, false);

    const expected = planned.map((p) => {
      const step = CONTRACTS.indexOf(p.contract) + 1;
      let n = 0;
      for (let b = Math.max(100, p.fromBlock); b <= Math.min(399, p.toBlock); b++) if (p.chainId !== 3 && b % step === 0) n++;
      return n;
    });
    expect(ranges.map((r) => results.get(r.id)?.rows)).toEqual(expected);
    expect(expected.filter((n) => n > 0).length).toBeGreaterThan(60);
    const coverage = await db.selectFrom('export_coverage').select(['job', 'row_count', 'chain_id', 'contract_address', 'from_block', 'to_block']).execute();
    const byJob = new Map(coverage.map((c) => [c.job, c]));
    for (const [i, p] of planned.entries()) {
      const c = byJob.get(`counts-${i}`);
      expect([Number(c?.row_count), Number(c?.chain_id), c?.contract_address, Number(c?.from_block), Number(c?.to_block)]).toEqual([
        expected[i],
        p.chainId,
        p.contract,
        p.fromBlock,
        p.toBlock,
      ]);
    }
    expect(await db.selectFrom('export_chunks').select('id').execute()).toEqual([]);

    // claimed once: closing them again changes nothing
    expect((await reconcileRanges(db, ranges, runId, false)).size).toBe(0);
    expect((await db.selectFrom('export_coverage').select('job').execute()).length).toBe(planned.length);
  });

  it("does not take another call's close for its own: a retry whose earlier attempt rolled back closes nothing", async () => {
    const db = target.warehouse.db;
    const runId = await startRun(db, { chainId: 1, job: 'traced', command: 'enqueue', contracts: CONTRACTS });
    const ranges = [await createRange(db, { chainId: 1, job: 'traced', contract: CONTRACTS[0]!, fromBlock: 100, toBlock: 199, runId, chunks: [{ fromBlock: 100, toBlock: 199 }] })];
    // this call's first attempt got a transaction id and rolled back (its connection broke before COMMIT)
    const trace = commitTrace();
    await tracedTransaction(db, trace, async () => {
      throw new Error('the connection broke');
    }).catch(() => undefined);
    expect(trace.attempts).toHaveLength(1);
    expect(await committedAttempt(db, trace)).toBeUndefined();
    // meanwhile another task of the same queued run closed the range
    expect([...(await reconcileRanges(db, ranges, runId, false)).values()]).toEqual([{ rows: 100, removed: 0 }]);
    // the retry: nothing of that close is reported as its own
    expect((await reconcileRanges(db, ranges, runId, false, trace)).size).toBe(0);
  });

  it('ends an earlier attempt still in progress on a lost connection and closes once it has rolled back: the retry neither waits on its locks nor counts twice', async () => {
    const db = target.warehouse.db;
    const runId = await startRun(db, { chainId: 1, job: 'traced-stranded', command: 'run', contracts: CONTRACTS });
    const ranges = [
      await createRange(db, { chainId: 1, job: 'traced-stranded', contract: CONTRACTS[2]!, fromBlock: 300, toBlock: 399, runId, chunks: [{ fromBlock: 300, toBlock: 399 }] }),
    ];
    // the first attempt's backend lives on, its transaction open and holding the range's row, as when the network
    // dropped the connection one way: the client has given up on it, and its COMMIT could still arrive
    const stranded = new pg.Client({ connectionString: target.url });
    const ended = new Promise<Error>((resolve) => stranded.on('error', resolve));
    await stranded.connect();
    await stranded.query('BEGIN');
    const { rows } = await stranded.query<CommitAttempt>(ATTEMPT_QUERY);
    await stranded.query('UPDATE export_ranges SET id = id WHERE id = $1', [ranges[0]!.id]);
    const trace = commitTrace();
    trace.attempts.push(rows[0]!);

    // the retry: not "did not commit" while it may still, but its backend told to end, and the close made once that
    // transaction has rolled back (before, the retry waited on its row lock until the backend ended, hours later)
    expect([...(await reconcileRanges(db, ranges, runId, false, trace)).values()]).toEqual([{ rows: 34, removed: 0 }]);
    expect((await ended).message).toMatch(/terminat/i);
    expect(trace.attempts).toHaveLength(2);
  });

  it('reads back what its committed attempt closed, however many attempts came before', async () => {
    const db = target.warehouse.db;
    const runId = await startRun(db, { chainId: 1, job: 'traced-twice', command: 'run', contracts: CONTRACTS });
    const ranges = [
      await createRange(db, { chainId: 1, job: 'traced-twice', contract: CONTRACTS[1]!, fromBlock: 200, toBlock: 299, runId, chunks: [{ fromBlock: 200, toBlock: 299 }] }),
    ];
    const trace = commitTrace();
    await tracedTransaction(db, trace, async () => {
      throw new Error('the connection broke');
    }).catch(() => undefined);
    // the second attempt committed: as if its answer were lost, the third asks
    const closed = await reconcileRanges(db, ranges, runId, false, trace);
    expect([...closed.values()]).toEqual([{ rows: 50, removed: 0 }]);
    expect(await committedAttempt(db, trace)).toMatch(/^\d+$/);
    expect(await reconcileRanges(db, ranges, runId, false, trace)).toEqual(closed);
  });

  describe('while a first load builds its lookup indexes', () => {
    const CONTRACT = '0x4444444444444444444444444444444444444444';
    /** A range of CONTRACT over blocks `from`–`from + 19`, one transfer a block, whose pages found the first `missing` of them gone. */
    const rangeWithMissing = async (name: string, from: number, missing: number) => {
      const db = target.warehouse.db;
      const rows = rowsOf(1)
        .filter((r) => r.contract_address === CONTRACTS[0] && Number(r.block_number) >= from && Number(r.block_number) < from + 20)
        .map((r) => ({ ...r, contract_address: CONTRACT, transaction_hash: `${r.transaction_hash.slice(0, -4)}4444` }));
      await db.insertInto('token_transfers').values(rows).execute();
      const runId = await startRun(db, { chainId: 1, job: name, command: 'run', contracts: [CONTRACT] });
      const range = await createRange(db, {
        chainId: 1,
        job: name,
        contract: CONTRACT,
        fromBlock: from,
        toBlock: from + 19,
        runId,
        chunks: [{ fromBlock: from, toBlock: from + 19 }],
      });
      if (missing) {
        const gone = rows
          .slice(0, missing)
          .map((r) => ({ range_id: range.id, chain_id: '1', transaction_hash: r.transaction_hash, log_index: r.log_index, block_number: r.block_number }));
        await db.insertInto('export_missing').values(gone).execute();
      }
      return { runId, range };
    };
    const status = async (id: string) => (await target.warehouse.db.selectFrom('export_ranges').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
    const stored = async (from: number) =>
      (
        await sql<{ n: number }>`SELECT count(*)::int AS n FROM token_transfers WHERE contract_address = ${CONTRACT} AND block_number BETWEEN ${from} AND ${from + 19}`.execute(
          target.warehouse.db,
        )
      ).rows[0]!.n;

    it('a close that would move rows or mark headers rolls back and says it needs the indexes; one that needs neither closes', async () => {
      const db = target.warehouse.db;
      const moving = await rangeWithMissing('pending-missing', 100, 3);
      // a session building an index holds token_transfers in SHARE mode: the close says so before any write would wait for it
      const builder = new pg.Client({ connectionString: target.url });
      await builder.connect();
      try {
        await builder.query('BEGIN');
        await builder.query('LOCK TABLE token_transfers IN SHARE MODE');
        const closing = reconcileRanges(db, [moving.range], moving.runId, false, commitTrace(), true);
        const waited = new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5000));
        expect(await Promise.race([closing.catch((e: unknown) => e), waited])).toBeInstanceOf(LookupIndexesPending);
        await builder.query('COMMIT');
        await closing.catch(() => undefined);
      } finally {
        await builder.end();
      }
      // nothing of it stayed: the range is open, its rows and its missing keys are where they were
      expect(await status(moving.range.id)).toBe('open');
      expect(await stored(100)).toBe(20);
      expect(await db.selectFrom('export_coverage').select('id').where('job', '=', 'pending-missing').execute()).toEqual([]);

      // rows that may have moved (an update, a resumed range) mark headers
      const marking = await rangeWithMissing('pending-marking', 140, 0);
      const markingTrace = commitTrace();
      await expect(reconcileRanges(db, [marking.range], marking.runId, true, markingTrace, true)).rejects.toBeInstanceOf(LookupIndexesPending);
      expect(await status(marking.range.id)).toBe('open');
      // said before it began a transaction: nothing claimed or counted to roll back
      expect(markingTrace.attempts).toEqual([]);

      // a first load's close: nothing missing, nothing moved
      const first = await rangeWithMissing('pending-first', 180, 0);
      expect([...(await reconcileRanges(db, [first.range], first.runId, false, commitTrace(), true)).values()]).toEqual([{ rows: 20, removed: 0 }]);
      expect(await status(first.range.id)).toBe('complete');
    });

    it('closeRanges waits for the indexes before a close that needs them, then moves the missing rows', async () => {
      const moving = await rangeWithMissing('pending-close', 220, 4);
      let standing!: () => void;
      let waited = false;
      const indexes = new Promise<void>((resolve) => {
        standing = resolve;
      });
      const totals = emptyTotals();
      const closing = closeRanges(
        { warehouse: target.warehouse, logger: pino({ level: 'silent' }), clock: systemClock },
        {
          job: job('pending-close', [{ address: CONTRACT, fromBlock: 220, toBlock: 239 }]),
          runId: moving.runId,
          ranges: [moving.range],
          head: 1000,
          ledger: { totals },
          mayHaveUpdates: false,
          lookupIndexes: () => {
            waited = true;
            return indexes;
          },
        },
      );
      await vi.waitFor(() => expect(waited).toBe(true), { timeout: 10_000 });
      // held till the indexes stand: the range is still open, its rows in place
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await status(moving.range.id)).toBe('open');
      expect(await stored(220)).toBe(20);
      standing();
      const closed = await closing;
      expect([...closed.values()]).toEqual([{ contract: CONTRACT, fromBlock: 220, toBlock: 239, rows: 16, removed: 4 }]);
      expect(totals.rowsRemoved).toBe(4);
      expect(await status(moving.range.id)).toBe('complete');
      expect(await stored(220)).toBe(16);
    });
  });
});
