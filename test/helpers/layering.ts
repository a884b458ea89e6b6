import path from 'node:path';
import { parseAst } from 'rolldown/parseAst';

/**
 * The folders of src/ and what each may import: arrows point one way,
 * `cli → queue / pipeline → source / warehouse → eth / common`. A pure checker over a list of files and the
 * modules they import (test/layering.test.ts feeds it every non-test file of src/).
 */

/** One source file, its path relative to the repository (`src/warehouse/runs.ts`), and the specifiers it imports as written. */
export interface ModuleImports {
  file: string;
  imports: readonly string[];
}

export type RuleId = 'layers' | 'database-packages' | 'unknown-folder' | 'outside-src';

export interface Violation {
  /** The importing file, e.g. `src/warehouse/runs.ts`. */
  file: string;
  /** The specifier as written, e.g. `../source/counters.ts` or `pg`. */
  import: string;
  /** Which rule it breaks. */
  rule: RuleId;
  /** The rule in words, with what it allows. */
  reason: string;
}

export interface FolderRule {
  /** Level 0 is pure and shared; a folder may import its own files and the folders in `mayImport`, nothing else of src/. */
  level: string;
  mayImport: readonly string[];
  /** Single files of other folders allowed besides `mayImport` (paths relative to the repository): exceptions, named one by one. */
  alsoFiles?: readonly string[];
}

const LEVEL_0 = ['common', 'eth', 'dataset', 'config'] as const;
const LEVEL_1 = ['source', 'warehouse', 'metrics'] as const;

/**
 * The rule table. Within level 0, common imports nothing else, eth → common, dataset → eth/common,
 * config → common/eth/dataset. Level 1 folders never import one another; of level 2 only queue imports
 * pipeline (the worker adapts the pipeline's runner). Nothing imports cli, bench or devnet, except that cli
 * serves the devnet (`erc20-etl devnet`) and the bench drives it. Type-only imports count like any other.
 */
export const FOLDER_RULES: Readonly<Record<string, FolderRule>> = {
  common: { level: '0', mayImport: [] },
  eth: { level: '0', mayImport: ['common'] },
  dataset: { level: '0', mayImport: ['common', 'eth'] },
  config: { level: '0', mayImport: ['common', 'eth', 'dataset'] },
  source: { level: '1', mayImport: LEVEL_0 },
  warehouse: { level: '1', mayImport: LEVEL_0 },
  metrics: { level: '1', mayImport: LEVEL_0 },
  pipeline: { level: '2', mayImport: [...LEVEL_0, ...LEVEL_1] },
  queue: { level: '2', mayImport: [...LEVEL_0, ...LEVEL_1, 'pipeline'] },
  report: { level: '2', mayImport: [...LEVEL_0, ...LEVEL_1] },
  // embedded PostgreSQL for the demo, the tests and the bench
  'local-postgres': { level: '0 (tooling)', mayImport: LEVEL_0 },
  // The reference server shares only pure modules. Exceptions, pure files of src/source, would be listed one by
  // one in `alsoFiles`; it uses none today, so there are none.
  devnet: { level: '0 (reference server)', mayImport: LEVEL_0, alsoFiles: [] },
  cli: { level: 'top', mayImport: [...LEVEL_0, ...LEVEL_1, 'pipeline', 'queue', 'report', 'local-postgres', 'devnet'] },
  // the benchmarks, a tool beside cli (which it never imports); it may leave src/ soon, and the rule then goes unused
  bench: { level: 'top (tool)', mayImport: [...LEVEL_0, ...LEVEL_1, 'pipeline', 'queue', 'report', 'local-postgres', 'devnet'] },
};

/** Packages that talk to PostgreSQL: only these folders import them. */
export const DATABASE_PACKAGES: readonly string[] = ['pg', 'kysely', 'pg-copy-streams'];
export const DATABASE_FOLDERS: readonly string[] = ['warehouse', 'local-postgres', 'bench'];

/**
 * Every import of `modules` that the layering forbids, in input order.
 *
 * @example findLayeringViolations([{ file: 'src/warehouse/runs.ts', imports: ['../source/counters.ts'] }])
 * // → [{ file: 'src/warehouse/runs.ts', import: '../source/counters.ts', rule: 'layers', reason: 'src/warehouse (level 1) may import only … ; src/source is not one of them' }]
 */
export function findLayeringViolations(modules: readonly ModuleImports[]): Violation[] {
  const violations: Violation[] = [];
  for (const { file, imports } of modules) {
    const from = folderOf(file);
    if (from === undefined) {
      // a file outside src/ is no business of this rule; the imports of one in src/ itself or in an unlisted folder are
      const posix = toPosix(file);
      if (!posix.startsWith('src/')) continue;
      for (const spec of imports) {
        violations.push({
          file,
          import: spec,
          rule: 'unknown-folder',
          reason: `${posix} is in no folder of the rule table: add its folder to FOLDER_RULES (test/helpers/layering.ts)`,
        });
      }
      continue;
    }
    const rule = FOLDER_RULES[from]!;
    for (const spec of imports) {
      const v = check(file, from, rule, spec);
      if (v) violations.push({ file, import: spec, ...v });
    }
  }
  return violations;
}

function check(file: string, from: string, rule: FolderRule, spec: string): Omit<Violation, 'file' | 'import'> | undefined {
  if (!isRelative(spec)) {
    const name = packageName(spec);
    if (DATABASE_PACKAGES.includes(name) && !DATABASE_FOLDERS.includes(from)) {
      return {
        rule: 'database-packages',
        reason: `${DATABASE_PACKAGES.join(', ')} are imported only in ${DATABASE_FOLDERS.map((f) => `src/${f}/`).join(', ')}; src/${from}/ goes through src/warehouse/`,
      };
    }
    return undefined;
  }
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(toPosix(file)), spec));
  if (!target.startsWith('src/')) {
    return { rule: 'outside-src', reason: `a file of src/ imports only files of src/ and packages; ${spec} is ${target}` };
  }
  const to = folderOf(target);
  if (to === undefined) {
    return { rule: 'unknown-folder', reason: `${target} is in no folder of the rule table: add its folder to FOLDER_RULES (test/helpers/layering.ts)` };
  }
  if (to === from || rule.mayImport.includes(to) || rule.alsoFiles?.includes(target)) return undefined;
  const allowed = rule.mayImport.length ? rule.mayImport.map((f) => `src/${f}`).join(', ') : 'nothing outside itself';
  const files = rule.alsoFiles?.length ? ` (and the files ${rule.alsoFiles.join(', ')})` : '';
  return { rule: 'layers', reason: `src/${from} (level ${rule.level}) may import only ${allowed}${files}; src/${to} is not one of them` };
}

/** The folder of src/ a file belongs to, if it is in one the rule table knows. */
function folderOf(file: string): string | undefined {
  const parts = toPosix(file).split('/');
  if (parts[0] !== 'src' || parts.length < 3) return undefined;
  return Object.hasOwn(FOLDER_RULES, parts[1]!) ? parts[1] : undefined;
}

const toPosix = (file: string) => file.split(path.sep).join('/');
const isRelative = (spec: string) => spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../');

/** `pg` of `pg`, `kysely` of `kysely/helpers/postgres`, `@scope/name` of `@scope/name/sub`. */
export function packageName(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** One line per violation: the file, what it imports, the rule and what the rule allows. */
export function formatViolations(violations: readonly Violation[]): string {
  return violations.map((v) => `${v.file} imports '${v.import}' [${v.rule}]: ${v.reason}`).join('\n');
}

type AstNode = { type: string; [key: string]: unknown };
const isNode = (v: unknown): v is AstNode => typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';

/**
 * The modules a TypeScript file imports, as written, in source order: `import … from` (type-only too),
 * side-effect `import '…'`, `export … from`, `import('…')` and `import('…').T` types with a literal
 * specifier, and `import x = require('…')`. An `import(name)` of a computed name is left out: no rule can
 * know where it goes.
 *
 * @example importsOf("import type { A } from './a.ts'; export * from './b.ts';") // → ['./a.ts', './b.ts']
 */
export function importsOf(source: string, file = 'module.ts'): string[] {
  const ast = parseAst(source, { lang: 'ts' }, file) as unknown as AstNode;
  const found: string[] = [];
  const walk = (n: AstNode) => {
    const spec = specifierOf(n);
    if (spec !== undefined) found.push(spec);
    for (const [key, value] of Object.entries(n)) {
      if (key === 'parent') continue;
      if (Array.isArray(value)) value.filter(isNode).forEach(walk);
      else if (isNode(value)) walk(value);
    }
  };
  walk(ast);
  return found;
}

function specifierOf(n: AstNode): string | undefined {
  switch (n.type) {
    case 'ImportDeclaration':
    case 'ExportNamedDeclaration':
    case 'ExportAllDeclaration':
    case 'ImportExpression':
    case 'TSImportType':
      return literal(n['source']);
    case 'TSExternalModuleReference':
      return literal(n['expression']);
    default:
      return undefined;
  }
}

/** The text of a string literal or of a template literal without substitutions. */
function literal(n: unknown): string | undefined {
  if (!isNode(n)) return undefined;
  if (n.type === 'Literal' && typeof n['value'] === 'string') return n['value'];
  if (n.type === 'TemplateLiteral' && (n['expressions'] as unknown[]).length === 0) {
    const [quasi] = n['quasis'] as { value: { cooked: string | null } }[];
    return quasi?.value.cooked ?? undefined;
  }
  return undefined;
}
