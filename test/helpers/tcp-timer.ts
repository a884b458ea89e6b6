import { readFileSync } from 'node:fs';
import type pg from 'pg';

/**
 * The kernel's timer on the TCP connection from local port `localPort` of this machine, whichever process holds it
 * (Linux, /proc/net/tcp and tcp6): `02` is the keepalive timer, `00` none; with the seconds left on it.
 */
export function tcpTimer(localPort: number): { kind: string; seconds: number } | undefined {
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
export async function clientPort(client: pg.ClientBase): Promise<number | null> {
  return (await client.query<{ port: number | null }>('SELECT inet_client_port() AS port')).rows[0]!.port;
}
