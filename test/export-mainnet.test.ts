import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { fromQuantity } from '../src/eth/hex.ts';
import { createRunMetrics, type RunMetrics } from '../src/metrics/run-metrics.ts';
import { serveMainnetFixture } from './helpers/devnet.ts';
import { datasetTransfers, job, migratedWarehouse, runExport, warehouseTransfers } from './helpers/exporter.ts';

describe('exporting the mainnet fixture', () => {
  const suite = serveMainnetFixture();
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    target = await migratedWarehouse('export_mainnet');
  });
  afterAll(() => target.drop());

  const contracts = () => [...new Set(suite.dataset.transfers.map((t) => t.contractAddress))].sort();
  /** Fresh metrics for one run, and how many transfers its bloom check checked (`erc20_etl_transfers_bloom_checked_total`). */
  const countingMetrics = (): { metrics: RunMetrics; bloomChecked(job: string): Promise<number>; total(name: string): Promise<number> } => {
    const registry = new Registry();
    return {
      metrics: createRunMetrics(registry),
      async total(name) {
        return (await registry.getSingleMetric(name)!.get()).values.reduce((a, v) => a + v.value, 0);
      },
      async bloomChecked(job) {
        const metric = await registry.getSingleMetric('erc20_etl_transfers_bloom_checked_total')!.get();
        return metric.values.filter((v) => v.labels.job === job).reduce((a, v) => a + v.value, 0);
      },
    };
  };
  const fixtureJob = () =>
    job(
      'mainnet-fixture',
      contracts().map((address) => ({ address, fromBlock: 0, toBlock: 19_900_000 })),
    );

  it('exports every transfer exactly, every column, each proven in its block header’s logsBloom', async () => {
    await fetch(`${suite.devnet.origin}/__control/reset-stats`, { method: 'POST' });
    const counting = countingMetrics();
    const summary = await runExport(target.url, suite.devnet.base, fixtureJob(), undefined, counting.metrics);
    expect(summary.totals.rowsInserted).toBe(910);
    expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(suite.dataset));
    // the bloom check ran over every row, each once, as its block's header arrived
    expect(await counting.bloomChecked('mainnet-fixture')).toBe(suite.dataset.transfers.length);
  });

  it('fetches each block header once, and stores every field of it, verified', async () => {
    const blocks = new Set(suite.dataset.transfers.map((t) => t.blockHash));
    const stats = await suite.devnet.stats();
    expect(stats.rpcCalls.erigon_getHeaderByHash).toBe(blocks.size);
    const rows = await target.warehouse.db.selectFrom('block_headers').selectAll().execute();
    expect(rows.map((r) => r.hash).sort()).toEqual([...blocks].sort());
    for (const row of rows) {
      const h = suite.dataset.headers.find((x) => x.hash === row.hash)!;
      const q = (v: string | null) => (v === null ? null : fromQuantity(v).toString());
      expect(row).toMatchObject({
        number: q(h.number),
        parent_hash: h.parentHash,
        sha3_uncles: h.sha3Uncles,
        miner: h.miner,
        state_root: h.stateRoot,
        transactions_root: h.transactionsRoot,
        receipts_root: h.receiptsRoot,
        logs_bloom: h.logsBloom,
        difficulty: q(h.difficulty),
        gas_limit: q(h.gasLimit),
        gas_used: q(h.gasUsed),
        timestamp: q(h.timestamp),
        extra_data: h.extraData,
        mix_hash: h.mixHash,
        nonce: h.nonce,
        base_fee_per_gas: q(h.baseFeePerGas),
        withdrawals_root: h.withdrawalsRoot,
        blob_gas_used: q(h.blobGasUsed),
        excess_blob_gas: q(h.excessBlobGas),
        parent_beacon_block_root: h.parentBeaconBlockRoot,
        requests_hash: h.requestsHash,
        block_access_list_hash: h.blockAccessListHash,
        hash_verified: true,
        extra_fields: null,
      });
    }
  });

  it('stores token metadata, NULL where the API does not know it', async () => {
    const tokens = await target.warehouse.db.selectFrom('tokens').selectAll().orderBy('contract_address').execute();
    expect(tokens.map((t) => t.contract_address)).toEqual(contracts());
    for (const t of tokens) {
      const known = suite.dataset.tokens.find((k) => k.contractAddress === t.contract_address);
      expect({ name: t.name, symbol: t.symbol, decimals: t.decimals }).toEqual(
        known ? { name: known.contractName, symbol: known.contractSymbol, decimals: Number(known.contractDecimals) } : { name: null, symbol: null, decimals: null },
      );
    }
  });

  it('scales values by decimals exactly in token_transfers_enriched', async () => {
    const { rows } = await sql<{ value: string; value_scaled: string }>`
      SELECT value, value_scaled::text FROM token_transfers_enriched
      WHERE contract_address = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2' ORDER BY value DESC LIMIT 1`.execute(target.warehouse.db);
    const { value, value_scaled } = rows[0]!;
    expect(value_scaled).toBe(`${value.slice(0, -18) || '0'}.${value.slice(-18).padStart(18, '0')}`);
  });

  it('changes nothing on a second run: no header fetched, no row rewritten', async () => {
    const versions = async () =>
      (await sql<{ k: string; x: string }>`SELECT transaction_hash || ':' || log_index AS k, xmin::text AS x FROM token_transfers ORDER BY 1`.execute(target.warehouse.db)).rows;
    const before = await versions();
    await fetch(`${suite.devnet.origin}/__control/reset-stats`, { method: 'POST' });
    const counting = countingMetrics();
    const summary = await runExport(target.url, suite.devnet.base, fixtureJob(), undefined, counting.metrics);
    expect(summary.totals).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsUnchanged: 910, rowsRemoved: 0, headersFetched: 0 });
    // no header fetched, yet every row read again is checked, against the stored headers' blooms
    expect(await counting.bloomChecked('mainnet-fixture')).toBe(910);
    expect((await suite.devnet.stats()).rpcCalls.erigon_getHeaderByHash ?? 0).toBe(0);
    expect(await versions()).toEqual(before);
    const runs = await target.warehouse.db.selectFrom('export_runs').select(['status', 'rows_inserted', 'rows_unchanged']).orderBy('id').execute();
    expect(runs).toEqual([
      { status: 'succeeded', rows_inserted: '910', rows_unchanged: '0' },
      { status: 'succeeded', rows_inserted: '0', rows_unchanged: '910' },
    ]);
  });

  it('checks a node job’s rows too: every row once, in the node source before its page is stored, counted by the run', async () => {
    const own = await migratedWarehouse('export_mainnet_node');
    try {
      // the fixture's busiest blocks, 16,000,000–16,000,003 (70 contracts): one eth_getLogs call per contract
      const span = { fromBlock: 16_000_000, toBlock: 16_000_003 };
      const rows = datasetTransfers(suite.dataset).filter((t) => t.blockNumber >= span.fromBlock && t.blockNumber <= span.toBlock);
      const addresses = [...new Set(rows.map((t) => t.contractAddress))].sort();
      expect(rows.length).toBeGreaterThan(200);
      const counting = countingMetrics();
      await fetch(`${suite.devnet.origin}/__control/reset-stats`, { method: 'POST' });
      const nodeJob = job(
        'mainnet-fixture-node',
        addresses.map((address) => ({ address, ...span })),
        { source: 'node' },
      );
      const summary = await runExport(own.url, suite.devnet.base, nodeJob, undefined, counting.metrics);
      expect(summary.totals.rowsInserted).toBe(rows.length);
      expect(await warehouseTransfers(own.warehouse)).toEqual(rows);
      expect(await counting.bloomChecked('mainnet-fixture-node')).toBe(rows.length);
      // the eth_getLogs calls the node answered, none refused (no caps here)
      const calls = (await suite.devnet.stats()).rpcCalls['eth_getLogs'];
      expect(calls).toBeGreaterThan(0);
      expect(await counting.total('erc20_etl_logs_calls_total')).toBe(calls);
      expect(await counting.total('erc20_etl_logs_refused_total')).toBe(0);
    } finally {
      await own.drop();
    }
  });
});
