import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { REPO_DIR } from './helpers/cli.ts';
import { findPathEscapes } from './helpers/path-escapes.ts';

const SCANNED = ['src/', 'test/', 'bench/', 'bin/', '.ci/', 'jobs/', 'migrations/', 'package.json', 'vitest.config.ts', 'tsconfig.json', 'docker-compose.yml'];

/** The repository's files under SCANNED: tracked ones, and new ones git does not ignore. */
function repositoryFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--', ...SCANNED], {
    cwd: REPO_DIR,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return [...new Set(listed.split('\0').filter((file) => file !== ''))].filter((file) => existsSync(path.join(REPO_DIR, file)));
}

function isText(bytes: Buffer): boolean {
  return !bytes.subarray(0, 8000).includes(0);
}

it('no source, test or config file reads a path outside the repository', () => {
  const files = repositoryFiles();
  expect(files).toContain('test/helpers/fixtures.ts');
  const escapes = files.flatMap((file) => {
    const bytes = readFileSync(path.join(REPO_DIR, file));
    return isText(bytes) ? findPathEscapes({ path: file, text: bytes.toString('utf8') }) : [];
  });
  const report = escapes.map((e) => `${e.file}:${e.line}: ${e.what}`).join('\n');
  expect(report, 'a clone of the repository has only its own files: put data under test/fixtures/ and resolve paths from the file or the repository root').toBe('');
});
