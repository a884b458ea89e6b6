import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { localStateDir } from '../../src/local-postgres/state-dir.ts';

const PROJECT_DIR = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The tests' embedded servers live in `test-pg` of the project's local state folder (`.data`, or as root a
 * folder in the system's temporary folder: see `localStateDir`). Folders in it are named `run-<pid>-…` after the
 * process that made them (the run's server, scratch clusters of tests) and removed by it; those whose process
 * is gone (a killed run) are removed by the next run's global setup.
 */
export async function embeddedTestRoot(): Promise<{ stateDir: string; root: string }> {
  const stateDir = await localStateDir(PROJECT_DIR);
  return { stateDir, root: path.join(stateDir, 'test-pg') };
}
