import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRange, type RangeState } from '../src/warehouse/ranges.ts';
import pg from 'pg';
import { ATTEMPT_QUERY, committedAttempt, commitTrace, tracedTransaction, type CommitAttempt } from '../src/warehouse/commit-trace.ts';
import { reconcileRanges } from '../src/warehouse/reconcile.ts';
import { startRun } from '../src/warehouse/runs.ts';
import { migratedWarehouse } from './helpers/exporter.ts';

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
});
