import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { REPO_DIR } from './helpers/cli.ts';
import { findLayeringViolations, formatViolations, importsOf, type ModuleImports } from './helpers/layering.ts';

/**
 * Folders import only what the layering allows (`cli → queue / pipeline → source / warehouse → eth / common`,
 * the table in test/helpers/layering.ts), and only src/warehouse/ and src/local-postgres/ (and the bench) import
 * pg, kysely and pg-copy-streams. Every non-test TypeScript file of src/ counts, whatever folders exist today.
 */

function sourceModules(): ModuleImports[] {
  const src = path.join(REPO_DIR, 'src');
  return readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts'))
    .sort()
    .map((name) => {
      const file = path.posix.join('src', name.split(path.sep).join('/'));
      return { file, imports: importsOf(readFileSync(path.join(src, name), 'utf8'), file) };
    });
}

it('no file of src imports a folder, or a database package, that the layering forbids', () => {
  const modules = sourceModules();
  expect(modules.length).toBeGreaterThan(50);
  expect(modules.map((m) => m.file)).toContain('src/warehouse/db.ts');
  const violations = findLayeringViolations(modules);
  // one line per import: the file, what it imports, the rule it breaks and what that rule allows
  expect(formatViolations(violations), `${violations.length} import(s) break the layering`).toBe('');
});
