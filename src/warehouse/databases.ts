import pg from 'pg';

/**
 * Creates the database `name` on the server of `serverUrl` unless it is there already; resolves to its URL
 * (the server's, naming `name`).
 *
 * @example await ensureDatabase('postgres://postgres@127.0.0.1:5432/postgres', 'erc20_demo') // → 'postgres://postgres@127.0.0.1:5432/erc20_demo'
 */
export async function ensureDatabase(serverUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
