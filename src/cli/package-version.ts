import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EtlError } from '../common/errors.ts';

const PACKAGE_NAME = 'erc20-etl';

/** Reads a file's text, or undefined when there is none. */
export type ReadText = (file: string) => string | undefined;

/**
 * The version in the nearest package.json named "erc20-etl" at or above FOLDER. Walks up rather than
 * assuming a depth, so it works from src/ run through tsx and from a compiled dist/ alike.
 */
export function findPackageVersion(folder: string, read: ReadText): string {
  for (let dir = path.resolve(folder); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    const text = read(file);
    if (text !== undefined) {
      const manifest = parseManifest(text);
      if (manifest?.name === PACKAGE_NAME) {
        if (typeof manifest.version === 'string' && manifest.version !== '') return manifest.version;
        throw new EtlError(`${file} names ${PACKAGE_NAME} but has no "version": restore the file from the package or the repository.`);
      }
    }
    if (path.dirname(dir) === dir) break;
  }
  throw new EtlError(
    `no package.json named "${PACKAGE_NAME}" in ${folder} or any folder above it: run erc20-etl from its package or a clone of the repository, with its package.json in place.`,
  );
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

/** The version of this package, from its package.json. */
export function packageVersion(): string {
  return findPackageVersion(path.dirname(fileURLToPath(import.meta.url)), readIfPresent);
}
