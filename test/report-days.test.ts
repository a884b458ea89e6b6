import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dailyTransfers } from '../src/warehouse/report-queries.ts';
import { migratedWarehouse } from './helpers/exporter.ts';

// The report's window is whole UTC days: a window counted back from the newest transfer's moment cut its first day
// short, and the chart showed that day with a fraction of its transfers.

const TOKEN = `0x${'ab'.repeat(20)}`;
let target: Awaited<ReturnType<typeof migratedWarehouse>>;

beforeAll(async () => {
  target = await migratedWarehouse('report_days');
  // three transfers on 2023-08-26 (one just after midnight, one at noon, one just before midnight) and two on
  // 2023-08-27, the newest at 10:00
  const at = ['2023-08-26T00:00:05Z', '2023-08-26T12:00:00Z', '2023-08-26T23:59:59Z', '2023-08-27T09:00:00Z', '2023-08-27T10:00:00Z'];
  const values = at.map((time, i) => {
    const hash = `0x${String(i + 1).padStart(64, '0')}`;
    return `('${hash}', 0, '${TOKEN}', '0x${'11'.repeat(20)}', '0x${'22'.repeat(20)}', ${i + 1}, ${1000 + i}, '${hash}', '${time}', 0, 0, 0, 1)`;
  });
  await target.warehouse.pool.query(
    `INSERT INTO token_transfers (transaction_hash, log_index, contract_address, from_address, to_address, value, block_number, block_hash,
       block_timestamp, transaction_index, inserted_by_run, updated_by_run, chain_id) VALUES ${values.join(', ')}`,
  );
});
afterAll(async () => {
  await target?.drop();
});

describe('the report window', () => {
  it("is whole UTC days ending with the newest transfer's day", async () => {
    const count = (days: Awaited<ReturnType<typeof dailyTransfers>>) => days.map((d) => [d.day, d.transfers]);
    // 1 day: the newest transfer's day alone
    expect(count(await dailyTransfers(target.warehouse.db, 1))).toEqual([['2023-08-27', 2]]);
    // 2 days: the day before whole, its first transfer (34 hours before the newest) too
    expect(count(await dailyTransfers(target.warehouse.db, 2))).toEqual([
      ['2023-08-26', 3],
      ['2023-08-27', 2],
    ]);
  });
});
