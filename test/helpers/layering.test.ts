import { describe, expect, it } from 'vitest';
import { FOLDER_RULES, findLayeringViolations, formatViolations, importsOf, packageName } from './layering.ts';

const check = (file: string, ...imports: string[]) => findLayeringViolations([{ file, imports }]);

describe('findLayeringViolations', () => {
  it('flags a warehouse file that imports a source type', () => {
    expect(check('src/warehouse/runs.ts', '../source/counters.ts')).toEqual([
      {
        file: 'src/warehouse/runs.ts',
        import: '../source/counters.ts',
        rule: 'layers',
        reason: 'src/warehouse (level 1) may import only src/common, src/eth, src/dataset, src/config; src/source is not one of them',
      },
    ]);
  });

  it('flags a source file that imports the warehouse', () => {
    expect(check('src/source/http-client.ts', '../warehouse/shared-rate-limit.ts')).toMatchObject([{ rule: 'layers' }]);
  });

  it('flags metrics importing the queue or the source', () => {
    expect(check('src/metrics/queue-metrics.ts', '../queue/queue-status.ts', '../source/counters.ts').map((v) => v.import)).toEqual([
      '../queue/queue-status.ts',
      '../source/counters.ts',
    ]);
  });

  it('flags config importing source, and common importing any other folder', () => {
    expect(check('src/config/settings.ts', '../source/api-url.ts')).toHaveLength(1);
    expect(check('src/common/retry.ts', '../eth/hex.ts')).toMatchObject([{ rule: 'layers', reason: expect.stringContaining('nothing outside itself') }]);
  });

  it('keeps level 0 in order: eth → common, dataset → eth, config → dataset, never back', () => {
    expect(check('src/eth/header-hash.ts', '../common/errors.ts')).toEqual([]);
    expect(check('src/dataset/read.ts', '../eth/hex.ts', '../common/errors.ts')).toEqual([]);
    expect(check('src/config/load-job.ts', '../dataset/types.ts', '../eth/hex.ts', '../common/errors.ts')).toEqual([]);
    expect(check('src/eth/hex.ts', '../dataset/types.ts')).toHaveLength(1);
    expect(check('src/dataset/types.ts', '../config/job-schema.ts')).toHaveLength(1);
  });

  it('lets a folder import its own files, in subfolders too', () => {
    expect(check('src/warehouse/runs.ts', './schema.ts', './sql/ranges.ts')).toEqual([]);
    expect(check('src/warehouse/sql/ranges.ts', '../schema.ts')).toEqual([]);
  });

  it('lets pipeline import level 0 and 1, and queue import the pipeline, but not the other way', () => {
    expect(check('src/pipeline/run-job.ts', '../source/errors.ts', '../warehouse/db.ts', '../metrics/run-metrics.ts', '../config/job-schema.ts')).toEqual([]);
    expect(check('src/queue/worker.ts', '../pipeline/run-job.ts')).toEqual([]);
    expect(check('src/pipeline/run-job.ts', '../queue/payloads.ts')).toMatchObject([{ rule: 'layers' }]);
  });

  it('flags report importing the pipeline or the queue', () => {
    expect(check('src/report/report-data.ts', '../pipeline/plan.ts', '../queue/queue-status.ts')).toHaveLength(2);
  });

  it('flags any import of cli or bench, and of devnet from anywhere but cli and bench', () => {
    expect(check('src/queue/worker.ts', '../cli/exporter.ts')).toHaveLength(1);
    expect(check('src/pipeline/run-job.ts', '../bench/targets.ts')).toHaveLength(1);
    expect(check('src/source/rpc-client.ts', '../devnet/rpc-errors.ts')).toHaveLength(1);
    expect(check('src/cli/devnet-serve.ts', '../devnet/server.ts')).toEqual([]);
    expect(check('src/cli/main.ts', '../bench/main.ts')).toMatchObject([{ rule: 'layers' }]);
    expect(check('src/bench/main.ts', '../cli/main.ts')).toMatchObject([{ rule: 'layers' }]);
  });

  it('keeps the devnet to pure modules: level 0, and no source file (none is listed as an exception)', () => {
    expect(check('src/devnet/reorg.ts', '../eth/header-hash.ts', '../dataset/types.ts', '../common/clock.ts')).toEqual([]);
    expect(FOLDER_RULES['devnet']!.alsoFiles).toEqual([]);
    expect(check('src/devnet/server.ts', '../source/errors.ts')).toHaveLength(1);
    expect(check('src/devnet/server.ts', '../warehouse/db.ts')).toHaveLength(1);
  });

  it('keeps local-postgres to level 0', () => {
    expect(check('src/local-postgres/embedded-postgres.ts', '../common/errors.ts')).toEqual([]);
    expect(check('src/local-postgres/embedded-postgres.ts', '../warehouse/migrate.ts')).toHaveLength(1);
  });

  it('flags a type-only import just like a value import: the input does not tell them apart', () => {
    const source = "import type { SourceCounters } from '../source/counters.ts';\n";
    expect(findLayeringViolations([{ file: 'src/warehouse/runs.ts', imports: importsOf(source) }])).toHaveLength(1);
  });

  it('flags pg, kysely and pg-copy-streams outside warehouse, local-postgres and bench, subpaths included', () => {
    const v = check('src/pipeline/read-chunk.ts', 'pg', 'kysely/helpers/postgres', 'pg-copy-streams', 'pino');
    expect(v.map((x) => [x.import, x.rule])).toEqual([
      ['pg', 'database-packages'],
      ['kysely/helpers/postgres', 'database-packages'],
      ['pg-copy-streams', 'database-packages'],
    ]);
    expect(check('src/warehouse/copy.ts', 'pg', 'pg-copy-streams')).toEqual([]);
    expect(check('src/local-postgres/embedded-postgres.ts', 'pg')).toEqual([]);
    expect(check('src/bench/statements.ts', 'pg')).toEqual([]);
  });

  it('does not mistake packages that merely start with pg for pg', () => {
    expect(check('src/queue/worker.ts', 'pg-boss', 'pgtyped', 'node:fs')).toEqual([]);
  });

  it('flags imports of a folder the table does not know, and imports that leave src', () => {
    expect(check('src/pipeline/run-job.ts', '../newthing/x.ts')).toMatchObject([{ rule: 'unknown-folder' }]);
    expect(check('src/newthing/x.ts', '../common/errors.ts')).toMatchObject([{ rule: 'unknown-folder' }]);
    expect(check('src/pipeline/run-job.ts', '../../migrations/0001.ts')).toMatchObject([{ rule: 'outside-src', reason: expect.stringContaining('migrations/0001.ts') }]);
  });

  it('ignores files outside src', () => {
    expect(check('test/helpers/exporter.ts', '../../src/cli/exporter.ts', 'pg')).toEqual([]);
  });

  it('prints one line per violation with the file, the import and the rule', () => {
    const text = formatViolations(check('src/metrics/run-metrics.ts', '../source/counters.ts'));
    expect(text).toBe(
      "src/metrics/run-metrics.ts imports '../source/counters.ts' [layers]: src/metrics (level 1) may import only src/common, src/eth, src/dataset, src/config; src/source is not one of them",
    );
  });
});

describe('importsOf', () => {
  it('finds static, type-only, side-effect and re-export imports in source order', () => {
    const source = [
      "import pg from 'pg';",
      "import type { Logger } from 'pino';",
      "import { type A, b } from './a.ts';",
      "import './side-effect.ts';",
      "export { c } from './c.ts';",
      "export type { D } from './d.ts';",
      "export * from './e.ts';",
      "export * as f from './f.ts';",
      'export const g = 1;',
    ].join('\n');
    expect(importsOf(source)).toEqual(['pg', 'pino', './a.ts', './side-effect.ts', './c.ts', './d.ts', './e.ts', './f.ts']);
  });

  it('finds import() with a string or plain template literal, and import types, but not a computed import()', () => {
    const source = [
      "const a = await import('./lazy.ts');",
      'const b = await import(`./template.ts`);',
      'const c = await import(name);',
      `const d = await import(\`./\${name}.ts\`);`,
      "type E = import('../source/counters.ts').SourceCounters;",
      "import f = require('./legacy.cjs');",
    ].join('\n');
    expect(importsOf(source)).toEqual(['./lazy.ts', './template.ts', '../source/counters.ts', './legacy.cjs']);
  });

  it('does not count specifiers in strings or comments', () => {
    expect(importsOf("// import x from './x.ts'\nconst s = \"import y from './y.ts'\";\n")).toEqual([]);
  });
});

describe('packageName', () => {
  it('keeps the scope of a scoped package and drops subpaths', () => {
    expect(packageName('@noble/hashes/sha3.js')).toBe('@noble/hashes');
    expect(packageName('graphile-worker/dist/cronMatcher.js')).toBe('graphile-worker');
    expect(packageName('pg')).toBe('pg');
  });
});
