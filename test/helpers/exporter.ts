import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { exportJob } from '../../src/cli/exporter.ts';
import type { RunMetrics } from '../../src/metrics/run-metrics.ts';
import type { JobConfig } from '../../src/config/job-schema.ts';
import type { Dataset, TransferRecord } from '../../src/dataset/types.ts';
import type { RunSummary } from '../../src/pipeline/run-job.ts';
import { parseApiUrl } from '../../src/config/api-url.ts';
import { createWarehouse, type Warehouse } from '../../src/warehouse/db.ts';
import { migrateToLatest } from '../../src/warehouse/migrate.ts';
import { freshDatabase } from './database.ts';
import type { Selectable } from 'kysely';
import type { TokenTransfersTable } from '../../src/warehouse/schema.ts';

/** A fresh, migrated database with a warehouse open on it. */
export async function migratedWarehouse(label: string): Promise<{ url: string; warehouse: Warehouse; drop(): Promise<void> }> {
  const database = await freshDatabase(label);
  // the test's own connections are told apart from the exporter's ('erc20-etl') by their application_name
  const warehouse = createWarehouse({ databaseUrl: database.url, logger: pino({ level: 'silent' }), maxConnections: 4, applicationName: 'erc20-etl test' });
  await migrateToLatest(warehouse);
  return {
    url: database.url,
    warehouse,
    drop: async () => {
      await warehouse.close();
      await database.drop();
    },
  };
}

/** Log lines a test can read: every line pino wrote, as text. */
export function captureLogger(): { logger: Logger; text(): string } {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), text: () => text };
}

/** A job with the defaults a job file would get. */
export function job(name: string, contracts: JobConfig['contracts'], overrides: Partial<JobConfig> = {}): JobConfig {
  return { name, contracts, pageSize: 1000, concurrency: 4, finality: 64, ...overrides } as JobConfig;
}

/** Runs a job in this process against an API base URL (the reference server) and a database. */
export function runExport(databaseUrl: string, apiBase: string, config: JobConfig, logger?: Logger, metrics?: RunMetrics): Promise<RunSummary> {
  return exportJob({ databaseUrl, api: parseApiUrl(apiBase), logger: logger ?? pino({ level: 'silent' }), tty: false, ...(metrics && { metrics }) }, config, 'run');
}

/** Every transfer in the warehouse, in the dataset's shape and order. */
export async function warehouseTransfers(warehouse: Warehouse): Promise<TransferRecord[]> {
  const rows = await warehouse.db.selectFrom('token_transfers').selectAll().orderBy('block_number').orderBy('log_index').execute();
  return rows.map(rowToTransfer);
}

/** A token_transfers (or token_transfers_removed) row in the dataset's shape. */
export function rowToTransfer(r: Selectable<TokenTransfersTable>): TransferRecord {
  return {
    contractAddress: r.contract_address,
    fromAddress: r.from_address,
    toAddress: r.to_address,
    value: r.value,
    blockHash: r.block_hash,
    blockNumber: Number(r.block_number),
    blockTimestamp: r.block_timestamp.toISOString(),
    transactionHash: r.transaction_hash,
    transactionIndex: r.transaction_index,
    logIndex: r.log_index,
  };
}

/** The dataset's transfers of some contracts, in the warehouse order. */
export function datasetTransfers(dataset: Dataset, contracts?: readonly string[]): TransferRecord[] {
  const wanted = contracts ? new Set(contracts) : undefined;
  return dataset.transfers
    .filter((t) => !wanted || wanted.has(t.contractAddress))
    .map((t) => ({ ...t }))
    .sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}

/** Parses `/__truth/*.jsonl` of a running reference server into a dataset. */
export async function truthOf(origin: string): Promise<Dataset> {
  const lines = async (file: string) =>
    (await (await fetch(`${origin}/__truth/${file}`)).text())
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as unknown);
  return {
    headers: (await lines('headers.jsonl')) as Dataset['headers'],
    transfers: (await lines('transfers.jsonl')) as Dataset['transfers'],
    tokens: (await lines('tokens.jsonl')) as Dataset['tokens'],
  };
}
