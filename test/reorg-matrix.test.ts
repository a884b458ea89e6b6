import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset, TransferRecord } from '../src/dataset/types.ts';
import type { DevnetConfig } from '../src/devnet/server.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import type { RunSummary } from '../src/pipeline/run-job.ts';
import type { Warehouse } from '../src/warehouse/db.ts';
import { chunkPositions, contractsOf, diffTransfers, EXACT, transferKey, triggerReorg, truthTransfers, waitFor, writeFigures, type ReorgAnswer } from './helpers/chaos.ts';
import { BIN, collect, REPO_DIR } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { job, migratedWarehouse, rowToTransfer, runExport, warehouseTransfers } from './helpers/exporter.ts';

// 8,000 transfers of 3 tokens over 2,000 blocks: the newest 64 blocks carry ~200 of them, and the head
// block has transfers of every contract, so even a reorg of depth 1 replaces rows the warehouse holds
const OPTIONS = { seed: 57, blocks: 2_000, tokens: 3, transfers: 8_000, startBlock: 3_000_000 };
const HEAD = OPTIONS.startBlock + OPTIONS.blocks - 1;
const FINALITY = 64;
const BETWEEN_RUNS_DEPTHS = Array.from({ length: 64 }, (_, i) => i + 1);
const MID_RUN_DEPTHS = [1, 3, 7, 16, 32, 48, 64];
const KILLED_RUN_DEPTHS = [7, 64];
/** Where the jobs of the mid-run cases start: their first run reads the newest 400 blocks, in small pages. */
const MID_RUN_FROM = HEAD - 399;
/**
 * Every case runs for builder jobs (getTokenTransfers pages) and node jobs (`"source": "node"`: eth_getLogs,
 * headers by hash, each transfer proven in its block's logsBloom). A node job's page is one eth_getLogs span: in
 * the mid-run cases the server caps spans at NODE_SPAN blocks (Infura's refusal) and the job starts there, so
 * a run has many small pages to be between, as a builder job's pages of 20 rows.
 */
const SOURCES = ['builder', 'node'] as const;
type SourceKind = (typeof SOURCES)[number];
const NODE_SPAN = 5;
/** The reference server of a mid-run case: for a node job, with eth_getLogs spans capped at NODE_SPAN blocks. */
const midRunServer = (source: SourceKind, config: Partial<DevnetConfig>): Partial<DevnetConfig> =>
  source === 'node' ? { ...config, logsLimits: { maxRange: NODE_SPAN, style: 'infura' } } : config;

interface RepairFigures {
  depth: number;
  forkBlock: number;
  /** Rows of the warehouse the reorg made wrong before the repairing run: gone from the chain, or changed. */
  staleRows: number;
  /** Transfers of the new fork the warehouse lacked before the repairing run. */
  missingRows: number;
  rowsRemoved: number;
  rowsInserted: number;
  rowsUpdated: number;
  /** Orphaned headers the warehouse had stored: all now canonical = false. */
  headersMarkedNonCanonical: number;
}

interface MidRunFigures extends RepairFigures {
  /** Rows of the replaced blocks the interrupted run had committed when the reorg struck. */
  oldForkRowsAtReorg: number;
  /** Pages committed, and chunks done out of all, when the reorg struck. */
  pagesAtReorg: number;
  chunksDoneAtReorg: string;
  /** How the interrupted run ended. */
  interruptedRun: 'succeeded' | 'failed' | 'killed';
  interruptedRunError?: string;
  /** How far the warehouse was from the truth after the repairing run (only recorded for killed runs). */
  afterRepair?: { lost: number; extra: number; changed: number; examples: string[] };
  /** The same after one more run, when the repairing run left differences. */
  afterOneMoreRun?: { lost: number; extra: number; changed: number; examples: string[] };
}

interface SourceFigures {
  betweenRuns: RepairFigures[];
  midRun: MidRunFigures[];
  midRunThenKilled: MidRunFigures[];
}
const figuresOf: Record<SourceKind, SourceFigures> = {
  builder: { betweenRuns: [], midRun: [], midRunThenKilled: [] },
  node: { betweenRuns: [], midRun: [], midRunThenKilled: [] },
};
afterAll(async () => {
  const repaired = (r: RepairFigures & { afterRepair?: { lost: number; extra: number; changed: number } }) =>
    !r.afterRepair || r.afterRepair.lost + r.afterRepair.extra + r.afterRepair.changed === 0;
  const totals = (rows: RepairFigures[]) => ({
    reorgsRepaired: rows.filter(repaired).length,
    reorgsNotRepaired: rows.length - rows.filter(repaired).length,
    rowsRemoved: rows.reduce((a, r) => a + r.rowsRemoved, 0),
    headersMarkedNonCanonical: rows.reduce((a, r) => a + r.headersMarkedNonCanonical, 0),
  });
  for (const source of SOURCES) {
    const figures = figuresOf[source];
    // the builder jobs' figures keep their file's name; the node jobs' have their own
    await writeFigures(source === 'builder' ? 'reorg-matrix' : 'reorg-matrix-node', {
      dataset: OPTIONS,
      source,
      finality: FINALITY,
      ...(source === 'node' && { midRunLogsSpan: NODE_SPAN }),
      betweenRuns: { ...totals(figures.betweenRuns), depths: figures.betweenRuns },
      midRun: { ...totals(figures.midRun), fromBlock: MID_RUN_FROM, depths: figures.midRun },
      midRunThenKilled: { ...totals(figures.midRunThenKilled), fromBlock: MID_RUN_FROM, depths: figures.midRunThenKilled },
    });
  }
});

let dataset: Dataset;
beforeAll(() => {
  dataset = generateSyntheticDataset(OPTIONS);
});

/**
 * A follow-the-head job: each run after the first re-reads the newest FINALITY blocks. A node job starts its
 * eth_getLogs spans at `nodeSpan` blocks when given (its pages; its `pageSize` only sets when its chunks split, and a
 * node job's file may not state it).
 */
const followHead = (source: SourceKind, name: string, fromBlock: number, pageSize: number, nodeSpan?: number) =>
  job(
    name,
    contractsOf(dataset).map((address) => ({ address, fromBlock })),
    { finality: FINALITY, pageSize, concurrency: 4, ...(source === 'node' && { source: 'node', ...(nodeSpan !== undefined && { logsRange: nodeSpan }) }) },
  );

/**
 * Resolves once the first contract's newest chunk has committed pages past every block a reorg of
 * `depth` will replace (its rows of those blocks are then in the warehouse), or `gaveUp()` says the run ended.
 */
async function newestChunkPast(warehouse: Warehouse, depth: number, gaveUp: () => boolean): Promise<void> {
  const forkBlock = HEAD - depth + 1;
  const first = contractsOf(dataset)[0]!;
  await waitFor(
    async () =>
      gaveUp() ||
      (await chunkPositions(warehouse.pool)).some((c) => c.contract === first && c.toBlock === HEAD && (c.done || (c.resumeToBlock !== null && c.resumeToBlock < forkBlock))),
    { what: `the newest chunk to read past block ${forkBlock}`, timeoutMs: 60_000 },
  );
}

/** Rows in the warehouse at or above `block`. */
async function rowsFrom(warehouse: Warehouse, block: number): Promise<number> {
  const { rows } = await warehouse.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM token_transfers WHERE block_number >= $1', [block]);
  return Number(rows[0]!.n);
}

/**
 * Checks the warehouse after the run that should have repaired a reorg: it equals `/__truth` from
 * `fromBlock` on; every row it held before that run (`before`) and the chain no longer has is in
 * token_transfers_removed, removed by that run, unchanged; every transfer's block has its header, and a
 * header is non-canonical exactly when no transfer points at it (the stored orphaned headers among them).
 */
async function expectRepaired(
  warehouse: Warehouse,
  origin: string,
  scope: { reorg: ReorgAnswer; fromBlock: number; before: readonly TransferRecord[]; run: RunSummary },
): Promise<{ figures: RepairFigures; rows: TransferRecord[] }> {
  const { reorg, before, run } = scope;
  const expected = await truthTransfers(origin, scope.fromBlock);
  const rows = await warehouseTransfers(warehouse);
  expect(diffTransfers(rows, expected), `the warehouse after repairing depth ${reorg.depth}`).toMatchObject(EXACT);

  const now = new Set(expected.map(transferKey));
  const gone = before.filter((t) => !now.has(transferKey(t)));
  expect(
    gone.filter((t) => t.blockNumber < reorg.forkBlock),
    'rows gone below the fork block',
  ).toEqual([]);
  const removed = await warehouse.db.selectFrom('token_transfers_removed').selectAll().where('removed_by_run', '=', run.runId).execute();
  const asRecord = rowToTransfer;
  expect(diffTransfers(removed.map(asRecord), gone), `rows removed by run ${run.runId} (depth ${reorg.depth})`).toMatchObject(EXACT);
  expect(run.totals.rowsRemoved).toBe(gone.length);

  const headers = await warehouse.db.selectFrom('block_headers').select(['hash', 'number', 'canonical']).execute();
  const stored = new Map(headers.map((h) => [h.hash, h.canonical]));
  expect(
    expected.filter((t) => !stored.has(t.blockHash)).map((t) => `${t.blockNumber} ${t.blockHash}`),
    'transfers without a header',
  ).toEqual([]);
  const pointedAt = new Set(expected.map((t) => t.blockHash));
  expect(
    headers.filter((h) => h.canonical !== pointedAt.has(h.hash)),
    'headers whose canonical flag is wrong',
  ).toEqual([]);
  const storedOrphans = reorg.orphanedHeaders.filter((h) => stored.has(h));
  expect(
    storedOrphans.filter((h) => stored.get(h) !== false),
    'orphaned headers still canonical',
  ).toEqual([]);

  const stale = diffTransfers(before, expected);
  const figures: RepairFigures = {
    depth: reorg.depth,
    forkBlock: reorg.forkBlock,
    staleRows: stale.extra + stale.changed,
    missingRows: stale.lost,
    rowsRemoved: gone.length,
    rowsInserted: run.totals.rowsInserted,
    rowsUpdated: run.totals.rowsUpdated,
    headersMarkedNonCanonical: storedOrphans.length,
  };
  return { figures, rows };
}

describe.each(SOURCES)('%s jobs: reorgs between runs, depths 1 to 64', (source) => {
  const figures = figuresOf[source];
  let devnet: RunningDevnet;
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    devnet = await startDevnet(dataset, { seed: 57 });
    target = await migratedWarehouse(`reorg_between_runs_${source}`);
  });
  afterAll(async () => {
    await target?.drop();
    await devnet?.close();
  });

  it('repairs each at the next run: the truth, removed rows kept with their run, orphaned headers non-canonical', async () => {
    const config = followHead(source, 'reorg-between-runs', OPTIONS.startBlock, 100);
    await runExport(target.url, devnet.base, config);
    let before = await warehouseTransfers(target.warehouse);
    expect(diffTransfers(before, await truthTransfers(devnet.origin))).toMatchObject(EXACT);
    for (const depth of BETWEEN_RUNS_DEPTHS) {
      const reorg = await triggerReorg(devnet.origin, depth);
      expect(reorg).toMatchObject({ depth, forkBlock: HEAD - depth + 1, head: HEAD });
      const run = await runExport(target.url, devnet.base, config);
      expect(run.ranges.map((r) => [r.fromBlock, r.toBlock])).toEqual(contractsOf(dataset).map(() => [HEAD - FINALITY + 1, HEAD]));
      const repaired = await expectRepaired(target.warehouse, devnet.origin, { reorg, fromBlock: OPTIONS.startBlock, before, run });
      figures.betweenRuns.push(repaired.figures);
      before = repaired.rows;
    }
    // the matrix proved something: rows were removed, and orphaned headers marked, across the depths
    expect(figures.betweenRuns.reduce((a, f) => a + f.rowsRemoved, 0)).toBeGreaterThan(0);
    expect(figures.betweenRuns.every((f) => f.headersMarkedNonCanonical > 0 && f.staleRows > 0)).toBe(true);
  }, 240_000);
});

describe.each(SOURCES)('%s jobs: reorgs while a run is between pages', (source) => {
  const figures = figuresOf[source];
  it.each(MID_RUN_DEPTHS)(
    'depth %i: the next run repairs what the interrupted run read from the old fork',
    async (depth) => {
      // a fresh chain and warehouse per depth; the interrupted run is a job's first, in small pages, slowed down
      const devnet = await startDevnet(dataset, midRunServer(source, { seed: 5700 + depth, faults: { latencyMs: [4, 8] } }));
      const target = await migratedWarehouse(`reorg_mid_run_${source}_${depth}`);
      try {
        const config = followHead(source, `reorg-mid-run-${depth}`, MID_RUN_FROM, 20, NODE_SPAN);
        let settled = false;
        const interrupted = runExport(target.url, devnet.base, config).then(
          (summary) => ({ ok: true as const, summary }),
          (err: unknown) => ({ ok: false as const, error: err instanceof Error ? err.message : String(err) }),
        );
        void interrupted.finally(() => (settled = true));

        // strike once the first contract's newest chunk has read past every block the reorg will replace
        const forkBlock = HEAD - depth + 1;
        await newestChunkPast(target.warehouse, depth, () => settled);
        expect(settled, 'the run was still reading when the reorg struck').toBe(false);
        const oldForkRows = await rowsFrom(target.warehouse, forkBlock);
        const reorg = await triggerReorg(devnet.origin, depth);
        expect(reorg.forkBlock).toBe(forkBlock);
        const atReorg = await chunkPositions(target.warehouse.pool);
        expect(
          atReorg.some((c) => !c.done),
          'chunks were left to read after the reorg',
        ).toBe(true);
        expect(oldForkRows, 'rows of the replaced blocks were committed before the reorg').toBeGreaterThan(0);

        const outcome = await interrupted;
        const before = await warehouseTransfers(target.warehouse);
        const repair = await runExport(target.url, devnet.base, config);
        const { figures: repaired } = await expectRepaired(target.warehouse, devnet.origin, { reorg, fromBlock: MID_RUN_FROM, before, run: repair });
        // the interrupted run did leave rows of the old fork behind, so the repair had work to do (not all of
        // them need be: a transaction the reorg moved may land on its old log index, and a later page reads it again)
        expect(repaired.staleRows, 'stale rows left by the interrupted run').toBeGreaterThan(0);
        // the interrupted run removed nothing: it had read every row it held itself
        if (outcome.ok) expect(outcome.summary.totals.rowsRemoved).toBe(0);
        figures.midRun.push({
          ...repaired,
          oldForkRowsAtReorg: oldForkRows,
          pagesAtReorg: atReorg.reduce((a, c) => a + c.pages, 0),
          chunksDoneAtReorg: `${atReorg.filter((c) => c.done).length}/${atReorg.length}`,
          interruptedRun: outcome.ok ? 'succeeded' : 'failed',
          ...(!outcome.ok && { interruptedRunError: outcome.error }),
        });
      } finally {
        await target.drop();
        await devnet.close();
      }
    },
    120_000,
  );
});

describe.each(SOURCES)('%s jobs: reorgs while a run is between pages, the run then killed', (source) => {
  const figures = figuresOf[source];
  const tmp = mkdtempSync(join(tmpdir(), 'erc20-etl-reorg-kill-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it.each(KILLED_RUN_DEPTHS)(
    'depth %i: the next run, which resumes the killed one, leaves the warehouse equal to the truth',
    async (depth) => {
      const devnet = await startDevnet(dataset, midRunServer(source, { seed: 5800 + depth, faults: { latencyMs: [4, 8] } }));
      const target = await migratedWarehouse(`reorg_killed_run_${source}_${depth}`);
      try {
        const config = followHead(source, `reorg-killed-run-${depth}`, MID_RUN_FROM, 20, NODE_SPAN);
        const file = join(tmp, `${config.name}.json`);
        // a node job's file states no pageSize (it may not)
        const { pageSize: _pages, ...nodeJob } = config;
        writeFileSync(file, JSON.stringify(source === 'node' ? nodeJob : config));
        const child = spawn(process.execPath, [BIN, 'run', file], {
          cwd: REPO_DIR,
          env: { ...process.env, DATABASE_URL: target.url, CHAIN_API_URL: devnet.base, LOG_LEVEL: 'warn' },
        });
        let exited = false;
        const result = collect(child, 120_000).finally(() => (exited = true));

        const forkBlock = HEAD - depth + 1;
        await newestChunkPast(target.warehouse, depth, () => exited);
        expect(exited, `the run was still reading when the reorg struck: ${exited ? (await result).stderr : ''}`).toBe(false);
        const oldForkRows = await rowsFrom(target.warehouse, forkBlock);
        const reorg = await triggerReorg(devnet.origin, depth);
        // the run goes on for a few pages of the new fork, then dies without warning
        const pagesAtReorg = (await chunkPositions(target.warehouse.pool)).reduce((a, c) => a + c.pages, 0);
        await waitFor(async () => exited || (await chunkPositions(target.warehouse.pool)).reduce((a, c) => a + c.pages, 0) >= pagesAtReorg + 3, {
          what: 'three more pages after the reorg',
        });
        const atKill = await chunkPositions(target.warehouse.pool);
        expect(exited, 'the run was still reading when it was killed').toBe(false);
        child.kill('SIGKILL');
        expect((await result).signal).toBe('SIGKILL');
        expect(
          atKill.some((c) => !c.done),
          'chunks were left to read after the kill',
        ).toBe(true);
        // its job lock goes with its session
        await waitFor(
          async () => Number((await target.warehouse.pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM pg_locks WHERE locktype = 'advisory'`)).rows[0]!.n) === 0,
          {
            what: 'the killed run to release its job lock',
            timeoutMs: 30_000,
          },
        );

        const before = await warehouseTransfers(target.warehouse);
        const truthNow = await truthTransfers(devnet.origin, MID_RUN_FROM);
        const stale = diffTransfers(before, truthNow);
        expect(stale.extra + stale.changed, 'stale rows left by the killed run').toBeGreaterThan(0);
        const repair = await runExport(target.url, devnet.base, config);
        const afterRepair = diffTransfers(await warehouseTransfers(target.warehouse), truthNow);
        const orphans = await target.warehouse.db.selectFrom('block_headers').select('canonical').where('hash', 'in', reorg.orphanedHeaders).execute();
        const figure: MidRunFigures = {
          depth,
          forkBlock,
          staleRows: stale.extra + stale.changed,
          missingRows: stale.lost,
          rowsRemoved: repair.totals.rowsRemoved,
          rowsInserted: repair.totals.rowsInserted,
          rowsUpdated: repair.totals.rowsUpdated,
          headersMarkedNonCanonical: orphans.filter((h) => !h.canonical).length,
          oldForkRowsAtReorg: oldForkRows,
          pagesAtReorg,
          chunksDoneAtReorg: `${atKill.filter((c) => c.done).length}/${atKill.length} at the kill`,
          interruptedRun: 'killed',
          afterRepair: { lost: afterRepair.lost, extra: afterRepair.extra, changed: afterRepair.changed, examples: afterRepair.examples },
        };
        figures.midRunThenKilled.push(figure);
        if (afterRepair.lost + afterRepair.extra + afterRepair.changed > 0) {
          // for the diagnosis: does the run after that one repair it?
          await runExport(target.url, devnet.base, config);
          const third = diffTransfers(await warehouseTransfers(target.warehouse), truthNow);
          figure.afterOneMoreRun = { lost: third.lost, extra: third.extra, changed: third.changed, examples: third.examples };
        }
        expect(afterRepair, `the warehouse after the run that resumed the killed one (depth ${depth})`).toMatchObject(EXACT);
        await expectRepaired(target.warehouse, devnet.origin, { reorg, fromBlock: MID_RUN_FROM, before, run: repair });
      } finally {
        await target.drop();
        await devnet.close();
      }
    },
    120_000,
  );
});
