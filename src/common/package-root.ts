import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EtlError } from './errors.ts';

const PACKAGE_NAME = 'erc20-etl';

/** Reads a file's text, or undefined when there is none. */
export type ReadText = (file: string) => string | undefined;

/** The package.json of erc20-etl: its folder, its path and what it says. */
export interface PackageManifest {
  dir: string;
  file: string;
  version: unknown;
}

/**
 * The nearest package.json named "erc20-etl" at or above FOLDER. Walks up rather than assuming a depth, so
 * it is found from the TypeScript sources (src/…, under vitest or tsx) and from the compiled dist/src/… alike.
 */
export function findPackageManifest(folder: string, read: ReadText): PackageManifest {
  for (let dir = path.resolve(folder); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    const text = read(file);
    const manifest = text === undefined ? undefined : parseManifest(text);
    if (manifest?.name === PACKAGE_NAME) return { dir, file, version: manifest.version };
    if (path.dirname(dir) === dir) break;
  }
  throw new EtlError(
    `no package.json named "${PACKAGE_NAME}" in ${folder} or any folder above it: run erc20-etl from its package or a clone of the repository, with its package.json in place.`,
  );
}

/**
 * The folder of this package (the clone, or the installed package): where `jobs/`, `bin/` and the local state
 * folder are, whether this code runs from src/ or from dist/.
 *
 * @example packageRoot() // → '/srv/erc20-etl'
 */
export function packageRoot(): string {
  return ownPackageManifest().dir;
}

/** This package's own package.json, read from disk. */
export function ownPackageManifest(): PackageManifest {
  return findPackageManifest(path.dirname(fileURLToPath(import.meta.url)), readIfPresent);
}

function parseManifest(text: string): { name?: unknown; version?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

function readIfPresent(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
