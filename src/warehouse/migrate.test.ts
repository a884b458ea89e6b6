import { describe, expect, it } from 'vitest';
import { migrationNames } from './migrate.ts';

describe('migrationNames', () => {
  it('names compiled and source migrations without their extension, in order', () => {
    expect(migrationNames(['0002_b.js', '0001_a.js', '0003_c.mjs', '0004_d.ts', '0005_e.mts'])).toEqual(['0001_a', '0002_b', '0003_c', '0004_d', '0005_e']);
  });

  it('leaves out declarations, source maps and other files', () => {
    expect(migrationNames(['0001_a.js', '0001_a.d.ts', '0001_a.js.map', '0002_b.d.mts', 'README.md', '0003_c.json'])).toEqual(['0001_a']);
  });

  it('names a migration once when its source and its compiled file lie side by side', () => {
    expect(migrationNames(['0001_a.ts', '0001_a.js', '0002_b.js'])).toEqual(['0001_a', '0002_b']);
  });
});
