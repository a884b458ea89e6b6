import { describe, expect, it } from 'vitest';
import { findPathEscapes } from './path-escapes.ts';

// the paths under test are built from pieces, so that this file does not trip the repository's own check
const up = (n: number) => '../'.repeat(n);
const sharedFixtures = `${up(3)}shared/fixtures`;

describe('findPathEscapes', () => {
  it('catches a fixture folder three levels up from test/helpers, with its file and line', () => {
    const text = `import { fileURLToPath } from 'node:url';\n\nexport const DIR = fileURLToPath(new URL('${sharedFixtures}', import.meta.url));\n`;
    const escapes = findPathEscapes({ path: 'test/helpers/fixtures.ts', text });
    expect(escapes).toEqual([
      {
        file: 'test/helpers/fixtures.ts',
        line: 3,
        kind: 'climbs',
        what: `'${sharedFixtures}' resolves to ${up(1)}shared/fixtures, outside the repository root`,
      },
    ]);
  });

  it('catches a mention of the shared folder even where no path is resolved', () => {
    const text = `// the data lives in ${'..'}/shared/fixtures\nconst x = 1;\n`;
    const escapes = findPathEscapes({ path: 'src/a.ts', text });
    expect(escapes).toHaveLength(1);
    expect(escapes[0]).toMatchObject({ file: 'src/a.ts', line: 1, kind: 'names-shared' });
    expect(escapes[0]!.what).toMatch(/names \.\.\/shared/);
  });

  it('accepts a climb to the repository root from src/cli', () => {
    const text = `const PROJECT_DIR = fileURLToPath(new URL('${up(2)}', import.meta.url));\nconst BIN = '${up(2)}bin/erc20-etl.js';\n`;
    expect(findPathEscapes({ path: 'src/cli/demo-command.ts', text })).toEqual([]);
  });

  it('accepts relative imports and paths that stay inside', () => {
    const text = `import { x } from '${up(2)}test/helpers/fixtures.ts';\nimport { y } from './y.ts';\nif (rel.startsWith('..')) {}\n`;
    expect(findPathEscapes({ path: 'src/eth/header-hash.test.ts', text })).toEqual([]);
  });

  it('catches the same climb from a file one folder higher', () => {
    const text = `const ROOT = new URL('${up(2)}', import.meta.url);\n`;
    expect(findPathEscapes({ path: 'bin/erc20-etl.js', text })).toHaveLength(1);
  });

  it('takes the string arguments of path.join together, across lines', () => {
    const text = `const a = path.join(__dirname, '..', '..');\nconst b = path.join(\n  __dirname,\n  '..',\n  '..',\n  '..',\n);\n`;
    const escapes = findPathEscapes({ path: 'test/helpers/x.ts', text });
    expect(escapes.map((e) => e.line)).toEqual([4]);
    expect(escapes[0]!.what).toMatch(/^'\.\.\/\.\.\/\.\.' resolves to \.\./);
  });

  it('judges a template literal by its static prefix', () => {
    const inside = `const t = new URL(\`${up(2)}\${NAME}\`, import.meta.url);\n`;
    const outside = `const t = new URL(\`${up(3)}\${NAME}\`, import.meta.url);\n`;
    expect(findPathEscapes({ path: 'src/config/w.ts', text: inside })).toEqual([]);
    expect(findPathEscapes({ path: 'src/config/w.ts', text: outside })).toHaveLength(1);
  });

  it('catches a top-level file naming its parent folder', () => {
    const text = `{\n  "$schema": "${up(1)}x/job.schema.json"\n}\n`;
    expect(findPathEscapes({ path: 'package.json', text }).map((e) => e.what)).toEqual([
      `'${up(1)}x/job.schema.json' resolves to ../x/job.schema.json, outside the repository root`,
    ]);
  });
});
