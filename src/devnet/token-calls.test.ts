import { decodeAbiParameters, hexToString } from 'viem';
import { describe, expect, it } from 'vitest';
import type { TokenRecord } from '../dataset/types.ts';
import { abiBytes32, abiString, TOKEN_SELECTORS, tokenCallAnswer } from './token-calls.ts';

const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const usdc: TokenRecord = { contractAddress: USDC, contractName: 'USD Coin', contractSymbol: 'USDC', contractDecimals: '6' };
const known = (token: TokenRecord | undefined) => ({ token, isContract: true });
const decodeString = (hex: string) => decodeAbiParameters([{ type: 'string' }], hex as `0x${string}`)[0];
const decodeUint8 = (hex: string) => decodeAbiParameters([{ type: 'uint8' }], hex as `0x${string}`)[0];

describe('eth_call of a token’s metadata getters', () => {
  it('answers name() and symbol() as ABI strings and decimals() as a uint, as viem decodes them', () => {
    const call = (selector: string) => tokenCallAnswer(USDC, selector, known(usdc));
    expect(decodeString((call(TOKEN_SELECTORS.name) as { result: string }).result)).toBe('USD Coin');
    expect(decodeString((call(TOKEN_SELECTORS.symbol) as { result: string }).result)).toBe('USDC');
    expect(decodeUint8((call(TOKEN_SELECTORS.decimals) as { result: string }).result)).toBe(6);
  });

  it('encodes non-ASCII text as UTF-8, and text longer than one word over several', () => {
    const name = 'Éther Synthétique ✓ — a name longer than thirty-two bytes';
    expect(decodeString(abiString(name))).toBe(name);
    expect(decodeString(abiString(''))).toBe('');
    expect(abiString('DAI')).toBe(`0x${'0'.repeat(62)}20${'0'.repeat(63)}3444149${'0'.repeat(58)}`);
  });

  it('reads the contractSymbols spelling of a token line', () => {
    const answer = tokenCallAnswer(USDC, TOKEN_SELECTORS.symbol, known({ ...usdc, contractSymbol: undefined, contractSymbols: 'SUSD' }));
    expect(decodeString((answer as { result: string }).result)).toBe('SUSD');
  });

  it('answers MKR’s name and symbol as bytes32, as the real contract does', () => {
    const mkr = '0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2';
    const answer = tokenCallAnswer(mkr, TOKEN_SELECTORS.symbol, known({ contractAddress: mkr, contractName: 'Maker', contractSymbol: 'MKR', contractDecimals: '18' }));
    expect(answer).toEqual({ result: `0x4d4b52${'00'.repeat(29)}` });
    expect(hexToString(abiBytes32('Maker') as `0x${string}`, { size: 32 })).toBe('Maker');
  });

  it('answers an unknown value with a revert or 0x, fixed per token and getter, so a token’s getters differ', () => {
    const unknown = { contractAddress: '0x5d3a536e4d6dbd6114cc1ead35777bab948e3643', contractName: '', contractSymbol: '', contractDecimals: '' };
    const answers = Object.values(TOKEN_SELECTORS).map((s) => tokenCallAnswer(unknown.contractAddress, s, known(unknown)));
    // the address ends in 3: odd for name(), even for symbol(), odd again for decimals()
    expect(answers).toEqual([{ result: '0x' }, { reverted: true }, { result: '0x' }]);
    expect(tokenCallAnswer(unknown.contractAddress, TOKEN_SELECTORS.name, known(undefined))).toEqual(answers[0]);
    expect(tokenCallAnswer(unknown.contractAddress, TOKEN_SELECTORS.name, known(undefined))).toEqual(
      tokenCallAnswer(unknown.contractAddress, TOKEN_SELECTORS.name, known(undefined)),
    );
    const even = '0x5d3a536e4d6dbd6114cc1ead35777bab948e3640';
    expect(tokenCallAnswer(even, TOKEN_SELECTORS.name, known(undefined))).toEqual({ reverted: true });
  });

  it('treats decimals that are not a number as unknown, and answers any whole number', () => {
    // USDC's address ends in 8: decimals() of an unknown value reverts
    expect(tokenCallAnswer(USDC, TOKEN_SELECTORS.decimals, known({ ...usdc, contractDecimals: 'six' }))).toEqual({ reverted: true });
    const big = tokenCallAnswer(USDC, TOKEN_SELECTORS.decimals, known({ ...usdc, contractDecimals: '300' })) as { result: string };
    expect(BigInt(big.result)).toBe(300n);
  });

  it('reverts on another function of a contract, and answers 0x from an address without code', () => {
    expect(tokenCallAnswer(USDC, '0x70a08231', known(usdc))).toEqual({ reverted: true });
    expect(tokenCallAnswer(USDC, TOKEN_SELECTORS.name, { token: undefined, isContract: false })).toEqual({ result: '0x' });
  });
});
