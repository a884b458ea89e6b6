import { describe, expect, it } from 'vitest';
import { tokenLabels, type TokenRef } from './token-labels.ts';

const A = '0xa12a0f0a6fc3ef215e6e27ec907094eb03562f0c';
const B = '0x90e585df1f5e7288584ff29d6cf76cc5094c147c';
const C = '0xdad48b193b6f11e84a7b58d71935de884e74ba45';

describe('tokenLabels', () => {
  it('names a token by its symbol alone when the warehouse holds one chain and no other contract shares it', () => {
    const refs: TokenRef[] = [
      { chainId: '1', contract: A, token: 'USDC' },
      { chainId: '1', contract: B, token: 'USDT' },
    ];
    const name = tokenLabels(refs);
    expect(refs.map(name)).toEqual(['USDC', 'USDT']);
  });

  it('adds the chain when the warehouse holds several', () => {
    const refs: TokenRef[] = [
      { chainId: '1', contract: A, token: 'USDC' },
      { chainId: '8453', contract: A, token: 'USDC' },
    ];
    expect(refs.map(tokenLabels(refs))).toEqual(['USDC (chain 1)', 'USDC (chain 8453)']);
  });

  it('adds the address when two contracts of one chain have the same symbol, so each keeps a series of its own', () => {
    const refs: TokenRef[] = [
      { chainId: '8453', contract: A, token: 'SUSD' },
      { chainId: '8453', contract: B, token: 'SUSD' },
      { chainId: '8453', contract: C, token: 'WETH' },
      { chainId: '1', contract: C, token: 'WETH' },
    ];
    const names = refs.map(tokenLabels(refs));
    expect(names).toEqual([`SUSD ${A} (chain 8453)`, `SUSD ${B} (chain 8453)`, 'WETH (chain 8453)', 'WETH (chain 1)']);
    expect(new Set(names).size).toBe(refs.length);
  });

  it('gives one name to a contract however many rows it has', () => {
    const refs: TokenRef[] = [
      { chainId: '1', contract: A, token: 'SUSD' },
      { chainId: '1', contract: A, token: 'SUSD' },
      { chainId: '1', contract: B, token: 'SUSD' },
    ];
    const name = tokenLabels(refs);
    expect(name(refs[0]!)).toBe(name(refs[1]!));
    expect(name(refs[0]!)).not.toBe(name(refs[2]!));
  });
});
