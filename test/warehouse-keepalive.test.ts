import { readFileSync } from 'node:fs';
import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it, inject } from 'vitest';
import { createWarehouse, KEEPALIVE_IDLE_MS } from '../src/warehouse/db.ts';

/**
 * The kernel's timer on this process's TCP connection from `localPort` (Linux, /proc/net/tcp and tcp6): `02` is the
 * keepalive timer, `00` none; with the seconds left on it.
 */
function tcpTimer(localPort: number): { kind: string; seconds: number } | undefined {
  const hex = localPort.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // state 01: established
      if (!fields[1]?.endsWith(`:${hex}`) || fields[3] !== '01') continue;
      const [kind, when] = fields[5]!.split(':') as [string, string];
      return { kind, seconds: Number.parseInt(when, 16) / 100 };
    }
  }
  return undefined;
}

/** The local TCP port of a connection, as its server sees it; null over a Unix socket. */
async function clientPort(client: pg.ClientBase): Promise<number | null> {
  return (await client.query<{ port: number | null }>('SELECT inet_client_port() AS port')).rows[0]!.port;
}

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
});
