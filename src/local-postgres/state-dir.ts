import { createHash } from 'node:crypto';
import { lstat, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../common/errors.ts';

/** The folder under the system's temporary folder that holds every project's state when run as root. */
const ROOT_STATE_FOLDER = 'erc20-etl-root';

/**
 * Where a project keeps its local PostgreSQL clusters (the demo's, the tests', the bench's).
 *
 * - Not root: `<projectDir>/.data`. The server runs as this user, who can reach the project.
 * - Root: PostgreSQL refuses to run as root, so it runs as an unprivileged user, who may not be able to enter
 *   the project at all (a clone in root's home, or in any `mktemp -d` folder, is 0700). So the state lives in
 *   `<tmp>/erc20-etl-root/<project folder's name>-<hash of its path>`: one folder per clone, which that user
 *   can enter and the project can remove whole.
 *
 * @example stateDirFor({ projectDir: '/root/src/erc20-etl', asRoot: true, tmpDir: '/tmp' })
 * // '/tmp/erc20-etl-root/erc20-etl-5d41402abc4b2a76'
 */
export function stateDirFor(options: { projectDir: string; asRoot: boolean; tmpDir: string }): string {
  const projectDir = path.resolve(options.projectDir);
  if (!options.asRoot) return path.join(projectDir, '.data');
  const name =
    path
      .basename(projectDir)
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .slice(0, 40) || 'project';
  const hash = createHash('sha256').update(projectDir).digest('hex').slice(0, 16);
  return path.join(path.resolve(options.tmpDir), ROOT_STATE_FOLDER, `${name}-${hash}`);
}

/** True when this process runs as root (uid 0). */
export function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

/**
 * The project's state folder (see `stateDirFor`), created if missing. As root, the shared parent in the
 * temporary folder must be a real folder owned by root that nobody else may write to: root runs the binaries
 * copied there, so a folder another user prepared would let that user run code as root.
 */
export async function localStateDir(projectDir: string): Promise<string> {
  const asRoot = runningAsRoot();
  const dir = stateDirFor({ projectDir, asRoot, tmpDir: tmpdir() });
  if (!asRoot) {
    await mkdir(dir, { recursive: true });
    return dir;
  }
  const shared = path.dirname(dir);
  await mkdir(shared, { recursive: true, mode: 0o755 });
  await checkRootOwned(shared);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await checkRootOwned(dir);
  // so that a person looking at the temporary folder can tell which clone a folder belongs to
  await writeFile(path.join(dir, 'project.txt'), `${path.resolve(projectDir)}\n`);
  return dir;
}

async function checkRootOwned(dir: string): Promise<void> {
  const info = await lstat(dir);
  const problems: string[] = [];
  if (!info.isDirectory()) problems.push(`${dir} is not a folder${info.isSymbolicLink() ? ' (a symbolic link)' : ''}`);
  else if (info.uid !== 0) problems.push(`${dir} belongs to uid ${info.uid}, not root`);
  else if ((info.mode & 0o022) !== 0) problems.push(`${dir} may be written by others (mode ${(info.mode & 0o777).toString(8)})`);
  if (problems.length > 0) {
    throw new ConfigError(
      'The folder for local PostgreSQL state (run as root) is not safe to use:',
      problems,
      `Root runs PostgreSQL binaries from it. Remove it (rm -rf ${JSON.stringify(dir)}) and run again.`,
    );
  }
}
