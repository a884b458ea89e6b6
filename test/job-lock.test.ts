import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWarehouse } from '../src/warehouse/db.ts';
import { tryJobLock } from '../src/warehouse/job-lock.ts';
import { sleep, waitFor } from './helpers/chaos.ts';
import { migratedWarehouse } from './helpers/exporter.ts';
import { losingProxy } from './helpers/lost-answers.ts';

// The job lock lives on a connection of its own; when that connection drops, the lock is taken back on a new one for
// up to two minutes while PostgreSQL is away. A run that ends meanwhile (Ctrl-C) releases it without waiting them out.

let target: Awaited<ReturnType<typeof migratedWarehouse>>;
beforeAll(async () => {
  target = await migratedWarehouse('job_lock');
});
afterAll(async () => {
  await target?.drop();
});

describe('a job lock whose connection dropped while PostgreSQL is away', () => {
  it('is released at once, not after its two minutes of trying to take it back', async () => {
    // every connection goes through a proxy; closing it drops them and refuses new ones, as a PostgreSQL that went away
    const proxy = await losingProxy(target.url, []);
    const warehouse = createWarehouse({ databaseUrl: proxy.url, logger: pino({ level: 'silent' }), maxConnections: 2 });
    try {
      const lock = await tryJobLock(warehouse, 'lock-while-away');
      expect(lock).toBeDefined();
      await proxy.close();
      // the drop is noticed: the lock's connection leaves the pool, and taking the lock back begins (every attempt refused)
      await waitFor(() => warehouse.pool.totalCount === 0, { what: "the job lock's dropped connection to leave its pool", timeoutMs: 30_000 });
      await sleep(700); // at least one attempt refused and one wait of 500 ms begun
      const releasing = performance.now();
      await lock!.release();
      expect(performance.now() - releasing).toBeLessThan(10_000);
      // nothing holds the job now: a session of its own takes it
      const again = await tryJobLock(target.warehouse, 'lock-while-away');
      expect(again).toBeDefined();
      await again!.release();
    } finally {
      await warehouse.close().catch(() => undefined);
    }
  }, 180_000);
});
