import type { Warehouse } from './db.ts';

/**
 * Closes the warehouse and waits until each of its connections has ended: pg's `Pool.end()` resolves as soon
 * as it has asked them to, so a server stopped right after would end one still open with "terminating
 * connection due to administrator command", logged as an idle connection failure.
 */
export async function closeAndAwaitConnections(warehouse: Warehouse): Promise<void> {
  let open = warehouse.pool.totalCount;
  const ended = new Promise<void>((resolve) => {
    if (open === 0) resolve();
    warehouse.pool.on('remove', () => {
      if (--open === 0) resolve();
    });
  });
  await warehouse.close();
  await ended;
}
