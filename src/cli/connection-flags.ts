/** `--database-url` and `--api-url`, as commander hands them to an action (each overrides its environment variable). */
export interface ConnectionFlags {
  databaseUrl?: string;
  apiUrl?: string;
}
