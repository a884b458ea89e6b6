import type { Command } from 'commander';

/** `--database-url` and `--api-url`, as commander hands them to an action (each overrides its environment variable). */
export interface ConnectionFlags {
  databaseUrl?: string;
  apiUrl?: string;
}

/** Adds `--database-url`, and `--api-url` for a command that talks to the chain API. */
export function withConnections(cmd: Command, api: boolean): Command {
  cmd.option('--database-url <url>', 'PostgreSQL URL (default: $DATABASE_URL)');
  if (api)
    cmd.option('--api-url <url>', "the builder API's base URL including the project id, or a node source's JSON-RPC URL (default: $CHAIN_API_URL); never stored, logged or queued");
  return cmd;
}
