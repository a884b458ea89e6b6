import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { REPO_DIR } from './cli.ts';

/** Merges a test file's section into .data/figures/NAME.json (test files run in parallel: a lock folder serialises them). */
export async function recordFigures(section: string, data: Record<string, unknown>, name = 'world-overlap-security'): Promise<void> {
  const file = join(REPO_DIR, '.data', 'figures', `${name}.json`);
  const lock = `${file}.lock`;
  await mkdir(dirname(file), { recursive: true });
  for (let i = 0; ; i++) {
    try {
      await mkdir(lock);
      break;
    } catch {
      if (i === 400) await rmdir(lock).catch(() => undefined); // left by a killed run
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  try {
    const current = JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as Record<string, unknown>;
    current[section] = { ...data, recordedAt: new Date().toISOString() };
    await writeFile(file, `${JSON.stringify(current, null, 2)}\n`);
  } finally {
    await rmdir(lock).catch(() => undefined);
  }
}
