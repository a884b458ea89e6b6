import type pg from 'pg';

/** One normalised statement of pg_stat_statements: how often it ran, and the time spent executing it. */
export interface StatementTime {
  query: string;
  calls: number;
  totalMs: number;
  rows: number;
}

/**
 * Installs pg_stat_statements in the database when the server has it loaded (`shared_preload_libraries`);
 * resolves to whether it can be used.
 *
 * @example await enableStatements(client) // → true on the embedded server started with --statements
 */
export async function enableStatements(client: pg.Client): Promise<boolean> {
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT pg_stat_statements_reset()');
    return true;
  } catch {
    return false;
  }
}

/** Forgets what every database of the server has run so far. */
export async function resetStatements(client: pg.Client): Promise<void> {
  await client.query('SELECT pg_stat_statements_reset()');
}

/**
 * The statements of the current database that took the most execution time since the last reset, longest
 * first, their text cut to `width` characters on one line.
 *
 * @example await topStatements(client, 8) // → [{ query: 'WITH changed AS ( SELECT s.* FROM erc20_etl_staging s …', calls: 1004, totalMs: 81234, rows: 1004 }, …]
 */
export async function topStatements(client: pg.Client, limit: number, width = 90): Promise<StatementTime[]> {
  const { rows } = await client.query<{ query: string; calls: string; total_ms: number; rows: string }>(
    `SELECT s.query, s.calls::text AS calls, s.total_exec_time AS total_ms, s.rows::text AS rows
     FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
     WHERE d.datname = current_database() AND s.query NOT LIKE '%pg_stat_statements%'
     ORDER BY s.total_exec_time DESC LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ query: oneLine(r.query, width), calls: Number(r.calls), totalMs: r.total_ms, rows: Number(r.rows) }));
}

function oneLine(text: string, width: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}
