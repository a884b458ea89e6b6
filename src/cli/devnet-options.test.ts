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

describe('parseDevnetOptions: the node flags', () => {
  it('answers erigon_* and sets no eth_getLogs limit unless told otherwise', () => {
    const o = parseDevnetOptions({}, SYNTHETIC_DEFAULTS);
    expect(o.erigon).toBe(true);
    expect(o.logsLimits).toBeUndefined();
    expect(o.faults.logsHangRate).toBeUndefined();
    expect(parseDevnetOptions({ logsMaxRange: '0', logsMaxResults: '0', logsErrorStyle: 'reth' }, SYNTHETIC_DEFAULTS).logsLimits).toBeUndefined();
  });

  it('takes --no-erigon as commander hands it over', () => {
    expect(parseDevnetOptions({ erigon: false }, SYNTHETIC_DEFAULTS).erigon).toBe(false);
  });

  it('sets the caps with Infura’s answers unless another style is named', () => {
    expect(parseDevnetOptions({ logsMaxRange: '2000' }, SYNTHETIC_DEFAULTS).logsLimits).toEqual({ maxRange: 2000, style: 'infura' });
    expect(parseDevnetOptions({ logsMaxResults: '10000', logsErrorStyle: 'arbitrum' }, SYNTHETIC_DEFAULTS).logsLimits).toEqual({ maxResults: 10_000, style: 'arbitrum' });
    expect(parseDevnetOptions({ logsMaxRange: '5', logsMaxResults: '7', logsErrorStyle: 'alchemy' }, SYNTHETIC_DEFAULTS).logsLimits).toEqual({
      maxRange: 5,
      maxResults: 7,
      style: 'alchemy',
    });
  });

  it('takes --logs-hang-rate as a fault, and --chain-id for eth_chainId', () => {
    const o = parseDevnetOptions({ logsHangRate: '0.25', chainId: '8453' }, SYNTHETIC_DEFAULTS);
    expect(o.faults.logsHangRate).toBe(0.25);
    expect(o.chainId).toBe(8453);
  });

  it('rejects bad values, naming each flag and what it expects', () => {
    const attempt = () => parseDevnetOptions({ logsMaxRange: '-1', logsMaxResults: 'many', logsErrorStyle: 'cloudflare', logsHangRate: '1.5', chainId: '0' }, SYNTHETIC_DEFAULTS);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/--logs-max-range: expected an integer ≥ 0/);
    expect(attempt).toThrow(/--logs-max-results: expected an integer ≥ 0/);
    expect(attempt).toThrow(/--logs-error-style: expected infura, alchemy, quicknode, ankr, reth, arbitrum/);
    expect(attempt).toThrow(/--logs-hang-rate: expected a probability from 0 to 1/);
    expect(attempt).toThrow(/--chain-id: expected an integer ≥ 1/);
  });

  it('says a number too large to keep exact once, in the words of the others', () => {
    let message = '';
    try {
      parseDevnetOptions({ chainId: '99999999999999999999' }, SYNTHETIC_DEFAULTS);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.match(/--chain-id/g)).toHaveLength(1);
    expect(message).toContain('--chain-id: expected an integer from 1 to 9007199254740991, got "99999999999999999999"');
  });
});
