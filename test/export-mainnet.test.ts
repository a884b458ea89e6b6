import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { fromQuantity } from '../src/eth/hex.ts';
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
  const fixtureJob = () =>
    job(
      'mainnet-fixture',
      contracts().map((address) => ({ address, fromBlock: 0, toBlock: 19_900_000 })),
    );

  it('exports every transfer exactly, every column', async () => {
    await fetch(`${suite.devnet.origin}/__control/reset-stats`, { method: 'POST' });
    const summary = await runExport(target.url, suite.devnet.base, fixtureJob());
    expect(summary.totals.rowsInserted).toBe(910);
    expect(await warehouseTransfers(target.warehouse)).toEqual(datasetTransfers(suite.dataset));
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
    const summary = await runExport(target.url, suite.devnet.base, fixtureJob());
    expect(summary.totals).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsUnchanged: 910, rowsRemoved: 0, headersFetched: 0 });
    expect((await suite.devnet.stats()).rpcCalls.erigon_getHeaderByHash ?? 0).toBe(0);
    expect(await versions()).toEqual(before);
    const runs = await target.warehouse.db.selectFrom('export_runs').select(['status', 'rows_inserted', 'rows_unchanged']).orderBy('id').execute();
    expect(runs).toEqual([
      { status: 'succeeded', rows_inserted: '910', rows_unchanged: '0' },
      { status: 'succeeded', rows_inserted: '0', rows_unchanged: '910' },
    ]);
  });
});
