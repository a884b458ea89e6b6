import { describe, expect, it } from 'vitest';
import { ConfigError } from '../common/errors.ts';
import { SYNTHETIC_DEFAULTS } from '../devnet/synthetic.ts';
import { parseDevnetOptions } from './devnet-options.ts';

describe('parseDevnetOptions: --amounts', () => {
  it('generates edge-case amounts unless told otherwise', () => {
    expect(parseDevnetOptions({}, SYNTHETIC_DEFAULTS).amounts).toBe('edge-cases');
  });

  it('accepts realistic and edge-cases', () => {
    expect(parseDevnetOptions({ amounts: 'realistic' }, SYNTHETIC_DEFAULTS).amounts).toBe('realistic');
    expect(parseDevnetOptions({ amounts: 'edge-cases' }, SYNTHETIC_DEFAULTS).amounts).toBe('edge-cases');
  });

  it('rejects any other profile, naming the flag and the accepted ones', () => {
    const attempt = () => parseDevnetOptions({ amounts: 'huge' }, SYNTHETIC_DEFAULTS);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/--amounts: expected edge-cases or realistic, got "huge"/);
  });

  it('refuses --amounts with --dataset, which serves a folder as it is', () => {
    expect(() => parseDevnetOptions({ dataset: 'dir', amounts: 'realistic' }, SYNTHETIC_DEFAULTS)).toThrow(/drop --amounts or drop --dataset/);
  });
});
