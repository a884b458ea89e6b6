import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { REPO_DIR, runCli } from './helpers/cli.ts';

const { version } = JSON.parse(readFileSync(path.join(REPO_DIR, 'package.json'), 'utf8')) as { version: string };

it.each(['--version', '-V'])('erc20-etl %s prints the version from package.json and exits 0', async (flag) => {
  const r = await runCli([flag]);
  expect(r.stderr).toBe('');
  expect(r.stdout).toBe(`${version}\n`);
  expect(r.code).toBe(0);
});
