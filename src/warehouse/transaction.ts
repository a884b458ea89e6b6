import type { Transaction } from 'kysely';
import type { Warehouse } from './db.ts';
import type { Database } from './schema.ts';

/** One open transaction of the warehouse: pass it to warehouse functions in place of its `db`. */
export type WarehouseTransaction = Transaction<Database>;

/**
 * Runs `work` in one transaction: committed when it resolves, rolled back when it throws.
 *
 * @example await inTransaction(warehouse, async (trx) => startRun(trx, { job, command, contracts }));
 */
export function inTransaction<T>(warehouse: Warehouse, work: (trx: WarehouseTransaction) => Promise<T>): Promise<T> {
  return warehouse.db.transaction().execute(work);
}
