import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { TransferRecord } from '../src/dataset/types.ts';
import { readDataset } from '../src/dataset/read.ts';
import { copyTransfers } from '../src/warehouse/copy.ts';
import { DIGEST_SETTINGS, warehouseHoldsPage, type PageRows } from '../src/warehouse/page-digest.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';
import { migratedWarehouse } from './helpers/exporter.ts';

type Target = Awaited<ReturnType<typeof migratedWarehouse>>;
const BEGIN = `BEGIN; ${DIGEST_SETTINGS.map((s) => `SET LOCAL ${s}`).join('; ')}`;

// real mainnet rows: 78-digit values, every kind of address, millisecond timestamps
describe('comparing a page with the warehouse by digest', () => {
  let target: Target;
  let client: pg.PoolClient;
  let rows: TransferRecord[];
  let contract: string;
  let page: PageRows;
  beforeAll(async () => {
    const dataset = await readDataset(FIXTURE_DIR);
    const counts = new Map<string, number>();
    for (const t of dataset.transfers) counts.set(t.contractAddress, (counts.get(t.contractAddress) ?? 0) + 1);
    contract = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    rows = dataset.transfers.filter((t) => t.contractAddress === contract).sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex);
    target = await migratedWarehouse('page_digest');
    client = await target.warehouse.pool.connect();
    await copyTransfers(client, 'token_transfers', rows, ['chain_id', 'inserted_by_run', 'updated_by_run'], '1\t1\t1');
    // settings a server may have: the digest must not depend on them
    await client.query(`SET DateStyle = 'SQL, DMY'; SET TimeZone = 'Asia/Kolkata'; SET extra_float_digits = 3`);
    page = { chainId: 1, contract, rows, interior: { fromBlock: rows.at(-1)!.blockNumber, toBlock: rows[0]!.blockNumber }, carried: [], openRows: [] };
  });
  afterAll(async () => {
    client.release();
    await target.drop();
  });

  const holds = async (p: PageRows): Promise<boolean> => {
    await client.query(BEGIN);
    try {
      return await warehouseHoldsPage(client, p);
    } finally {
      await client.query('ROLLBACK');
    }
  };
  /** Runs `change` on one warehouse row (in a transaction rolled back afterwards) and compares. */
  const holdsAfter = async (change: string, p: PageRows = page): Promise<boolean> => {
    await client.query(BEGIN);
    try {
      const t = rows[Math.floor(rows.length / 2)]!;
      const updated = await client.query(`UPDATE token_transfers SET ${change} WHERE transaction_hash = $1 AND log_index = $2`, [t.transactionHash, t.logIndex]);
      expect(updated.rowCount).toBe(1);
      return await warehouseHoldsPage(client, p);
    } finally {
      await client.query('ROLLBACK');
    }
  };

  it('holds a page it loaded, whatever the session prints dates like', async () => {
    expect(rows.length).toBeGreaterThan(100);
    expect(await holds(page)).toBe(true);
  });

  it('sees a change in any one field of one row', async () => {
    const changes = [
      'value = value + 1',
      "block_timestamp = block_timestamp + interval '1 microsecond'",
      "block_timestamp = block_timestamp + interval '1 millisecond'",
      "from_address = '0x' || repeat('0', 40)",
      'to_address = from_address',
      "block_hash = '0x' || repeat('a', 64)",
      'transaction_index = transaction_index + 1',
      'log_index = log_index + 100000',
      "transaction_hash = '0x' || repeat('b', 64)",
      'block_number = block_number - 1',
      "contract_address = '0x' || repeat('c', 40)",
    ];
    for (const change of changes) expect(await holdsAfter(change), change).toBe(false);
    // provenance is not the row's data
    expect(await holdsAfter('updated_by_run = 7')).toBe(true);
  });

  it('sees a row the page lacks in the blocks it completes, unless an earlier page committed it', async () => {
    const [dropped, ...rest] = rows;
    expect(await holds({ ...page, rows: rest })).toBe(false);
    expect(await holds({ ...page, rows: rest, carried: [{ transactionHash: dropped!.transactionHash, logIndex: dropped!.logIndex }] })).toBe(true);
  });

  it('compares the rows of the open block by key, below the blocks the page completes', async () => {
    const last = rows.at(-1)!.blockNumber;
    const open = rows.filter((r) => r.blockNumber === last);
    const p = { ...page, interior: { fromBlock: last + 1, toBlock: rows[0]!.blockNumber }, openRows: open };
    expect(await holds(p)).toBe(true);
    // a row of the open block the page does not hold is for the next page to find
    expect(await holds({ ...p, rows: rows.slice(0, -1), openRows: open.slice(0, -1) })).toBe(open.length > 1);
    const t = open[0]!;
    await client.query(BEGIN);
    try {
      await client.query('UPDATE token_transfers SET value = value + 1 WHERE transaction_hash = $1 AND log_index = $2', [t.transactionHash, t.logIndex]);
      expect(await warehouseHoldsPage(client, p)).toBe(false);
    } finally {
      await client.query('ROLLBACK');
    }
  });

  it('an empty page completing empty blocks holds; one completing blocks with rows does not', async () => {
    expect(await holds({ chainId: 1, contract, rows: [], interior: { fromBlock: 1, toBlock: 1000 }, carried: [], openRows: [] })).toBe(true);
    expect(await holds({ ...page, rows: [] })).toBe(false);
  });
});
