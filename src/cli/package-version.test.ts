import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPackageVersion, type ReadText } from './package-version.ts';

const root = path.resolve('/pkg');
const files = (entries: Record<string, object | string>): ReadText => {
  const byPath = new Map(Object.entries(entries).map(([file, content]) => [path.join(root, file), typeof content === 'string' ? content : JSON.stringify(content)]));
  return (file) => byPath.get(file);
};

describe('findPackageVersion', () => {
  it('finds the package.json two folders up, as from src/cli', () => {
    const read = files({ 'package.json': { name: 'erc20-etl', version: '1.2.3' } });
    expect(findPackageVersion(path.join(root, 'src/cli'), read)).toBe('1.2.3');
  });

  it('finds it three folders up, as from a compiled dist/src/cli', () => {
    const read = files({ 'package.json': { name: 'erc20-etl', version: '0.4.0' } });
    expect(findPackageVersion(path.join(root, 'dist/src/cli'), read)).toBe('0.4.0');
  });

  it('walks past a nearer package.json of another name, and one that is not JSON', () => {
    const read = files({
      'package.json': { name: 'erc20-etl', version: '2.0.0' },
      'dist/package.json': { type: 'module' },
      'dist/cli/package.json': '{ not json',
    });
    expect(findPackageVersion(path.join(root, 'dist/cli'), read)).toBe('2.0.0');
  });

  it('says where it looked when no package.json is named erc20-etl', () => {
    const read = files({ 'package.json': { name: 'something-else', version: '9.9.9' } });
    expect(() => findPackageVersion(path.join(root, 'src/cli'), read)).toThrow(/no package\.json named "erc20-etl" in .*src.cli or any folder above it/);
  });

  it('names the file when its package.json has no version', () => {
    const read = files({ 'package.json': { name: 'erc20-etl' } });
    expect(() => findPackageVersion(path.join(root, 'src'), read)).toThrow(/package\.json names erc20-etl but has no "version"/);
  });
});
