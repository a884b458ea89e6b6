import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it, inject } from 'vitest';
import { createQueuePool, createWarehouse, KEEPALIVE_IDLE_MS } from '../src/warehouse/db.ts';
import { clientPort, tcpTimer } from './helpers/tcp-timer.ts';

describe('warehouse connections', () => {
  const serverUrl = inject('databaseServerUrl');
  const warehouse = createWarehouse({ databaseUrl: serverUrl, logger: pino({ level: 'silent' }), maxConnections: 2 });
  afterAll(() => warehouse.close());

  it('have the kernel probe them when idle (TCP keepalive), as a plain connection is not', async () => {
    const held = await warehouse.pool.connect();
    const plain = new pg.Client({ connectionString: serverUrl });
    await plain.connect();
    try {
      const port = await clientPort(held);
      if (port === null) {
        // over a Unix socket there is no network to lose: the setting is there for TCP
        expect((warehouse.pool.options as { keepAlive?: boolean }).keepAlive).toBe(true);
        return;
      }
      const timer = tcpTimer(port);
      expect(timer?.kind).toBe('02');
      expect(timer!.seconds).toBeLessThanOrEqual(KEEPALIVE_IDLE_MS / 1000);
      // a connection made without it has no such timer: the check can tell them apart
      expect(tcpTimer((await clientPort(plain))!)?.kind).toBe('00');
    } finally {
      held.release();
      await plain.end();
    }
  });

  it('of a worker’s queue are probed when idle too, and name themselves', async () => {
    const pool = createQueuePool({ databaseUrl: serverUrl, logger: pino({ level: 'silent' }), maxConnections: 1 });
    const held = await pool.connect();
    try {
      expect((await held.query<{ application_name: string }>('SHOW application_name')).rows[0]!.application_name).toBe('erc20-etl queue');
      const port = await clientPort(held);
      if (port === null) {
        expect((pool.options as { keepAlive?: boolean }).keepAlive).toBe(true);
        return;
      }
      expect(tcpTimer(port)?.kind).toBe('02');
    } finally {
      held.release();
      await pool.end();
    }
  });
});
