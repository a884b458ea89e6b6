import { EtlError } from '../common/errors.ts';
import { findPackageManifest, ownPackageManifest, type PackageManifest, type ReadText } from '../common/package-root.ts';

export type { ReadText } from '../common/package-root.ts';

/**
 * The version in the nearest package.json named "erc20-etl" at or above FOLDER (see `findPackageManifest`):
 * from src/ run through tsx or vitest and from a compiled dist/ alike.
 */
export function findPackageVersion(folder: string, read: ReadText): string {
  return versionOf(findPackageManifest(folder, read));
}

/** The version of this package, from its package.json. */
export function packageVersion(): string {
  return versionOf(ownPackageManifest());
}

function versionOf(manifest: PackageManifest): string {
  if (typeof manifest.version === 'string' && manifest.version !== '') return manifest.version;
  throw new EtlError(`${manifest.file} names erc20-etl but has no "version": restore the file from the package or the repository.`);
}
