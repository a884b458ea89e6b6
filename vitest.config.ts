import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'bench/**/*.test.ts', 'test/**/*.test.ts'],
    // dist/ built from the sources (the tests spawn the CLI, which runs it); then one PostgreSQL server for the
    // run: DATABASE_URL, testcontainers, or embedded (see the files)
    globalSetup: ['test/build-dist.ts', 'test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // kysely's FileMigrationProvider imports migrations/*.ts: through vitest's module runner, which reads
    // TypeScript, rather than Node's own import (src/warehouse/migrate.ts)
    server: { deps: { inline: ['kysely'] } },
    reporters: ['default', 'json'],
    outputFile: { json: '.data/vitest-report.json' },
  },
});
