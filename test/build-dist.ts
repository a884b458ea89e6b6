import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { rolldown } from 'rolldown';
import type { TestProject } from 'vitest/node';
import { bundleOptions } from '../rolldown.config.ts';
import { REPO_DIR } from './helpers/cli.ts';

const DIST = path.join(REPO_DIR, 'dist');
/** What bin/erc20-etl.js loads, relative to dist/. */
const BUNDLE_ENTRY = path.join('src', 'bundle', 'main.js');
const TSC = path.join(REPO_DIR, 'node_modules', 'typescript', 'bin', 'tsc');
// tsc's exit code when it found type errors and wrote its output all the same
const EMITTED_WITH_ERRORS = 2;

/**
 * Builds dist/ from the sources before the tests run, and again before each rerun in watch mode: the tests
 * spawn bin/erc20-etl.js, which runs dist/, and must run what the sources say now, never an older build.
 */
export default async function setup(project: TestProject): Promise<void> {
  await buildDist();
  project.onTestsRerun(() => buildDist());
}

/**
 * `npm run build`, made safe for test runs that spawn the CLI meanwhile: tsc writes into a fresh folder under
 * .data/ and rolldown bundles the CLI there (`bundleOptions`), then each file whose text changed moves into dist/
 * by a rename (no process ever reads half a file), the bundle's entry last (its chunks' names change with their
 * text: an entry moved first would name chunks not there yet), and the files the sources no longer make are removed
 * from dist/ (a deleted module must not live on there).
 * Type errors do not stop it (`npm test` type-checks first and reports them); any other failure does.
 */
export async function buildDist(): Promise<void> {
  const out = path.join(REPO_DIR, '.data', `dist-build-${randomBytes(4).toString('hex')}`);
  try {
    await compile(out);
    await bundle(out);
    const built = new Set(await filesUnder(out));
    for (const file of [...built].sort((a, b) => Number(a === BUNDLE_ENTRY) - Number(b === BUNDLE_ENTRY))) {
      const target = path.join(DIST, file);
      const text = await readFile(path.join(out, file));
      const current = await readFile(target).catch(() => undefined);
      if (current?.equals(text)) continue;
      await mkdir(path.dirname(target), { recursive: true });
      await rename(path.join(out, file), target);
    }
    for (const file of await filesUnder(DIST)) if (!built.has(file)) await rm(path.join(DIST, file), { force: true });
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

async function compile(out: string): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, [TSC, '-p', 'tsconfig.build.json', '--outDir', out], { cwd: REPO_DIR, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const failure = err as { code?: unknown; stdout?: string; stderr?: string; message: string };
    if (failure.code === EMITTED_WITH_ERRORS) {
      process.stderr.write(`build-dist: dist/ is built, but tsc found type errors (npm test's type-check lists them):\n${failure.stdout ?? ''}`);
      return;
    }
    throw new Error(
      `Building dist/ for the tests failed: ${failure.stderr || failure.stdout || failure.message}. Run \`npm run build\` to see why, fix it, and run the tests again.`,
    );
  }
}

/** The CLI of the compiled tree `dir` bundled into `dir`/src/bundle, as `npm run build` does. */
async function bundle(dir: string): Promise<void> {
  const { output, ...input } = bundleOptions(dir);
  const build = await rolldown(input);
  try {
    await build.write(Array.isArray(output) ? output[0] : output);
  } finally {
    await build.close();
  }
}

/** The files under DIR, as paths relative to it; none when DIR does not exist. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}
