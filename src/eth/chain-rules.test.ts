import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHAINS_FIXTURE_DIR, FIXTURE_DIR } from '../../test/helpers/fixtures.ts';
import { verifyChainHeader, type ChainHeader } from './chain-rules.ts';

const readHeaders = (file: string): Record<string, unknown>[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const chains = readdirSync(CHAINS_FIXTURE_DIR).filter((d) => /^\d+$/.test(d));
const realHeaders = chains.flatMap((dir) => readHeaders(join(CHAINS_FIXTURE_DIR, dir, 'headers.jsonl')).map((header) => ({ chainId: Number(dir), header })));

const EXPECTED_RULE: Record<number, string> = {
  10: 'op-stack',
  8453: 'op-stack',
  42161: 'arbitrum-nitro',
  137: 'polygon-bor',
  56: 'bnb-parlia',
  100: 'gnosis',
  43114: 'avalanche-coreth',
};

/** A copy of the header with `key` changed in its last hex digit (or `step` plus one). */
function changed(header: ChainHeader, key: string): ChainHeader {
  const value = header[key];
  if (typeof value === 'number') return { ...header, [key]: value + 1 };
  const text = String(value);
  const last = text.at(-1) === '0' ? '1' : '0';
  return { ...header, [key]: `${text.slice(0, -1)}${last}` };
}

describe('verifyChainHeader', () => {
  it('has the real headers of seven chains to check, of every family', () => {
    expect(chains.map(Number).sort((a, b) => a - b)).toEqual([10, 56, 100, 137, 8453, 42161, 43114]);
    expect(realHeaders.length).toBeGreaterThanOrEqual(9);
  });

  it.each(realHeaders.map((r) => [r.chainId, Number.parseInt(String(r.header.number), 16), r] as const))(
    'verifies chain %i block %i by its chain rule',
    (chainId, block, { header }) => {
      expect(verifyChainHeader(chainId, header)).toEqual({ block, rule: EXPECTED_RULE[chainId], verified: true });
    },
  );

  it('fails each real header with one consensus field changed, naming its block', () => {
    for (const { chainId, header } of realHeaders) {
      const key = chainId === 100 && 'step' in header ? 'step' : 'stateRoot';
      const verdict = verifyChainHeader(chainId, changed(header, key));
      const block = Number.parseInt(String(header.number), 16);
      expect(verdict).toMatchObject({ block, verified: false, failed: true, rule: EXPECTED_RULE[chainId] });
      expect(verdict.verified === false && verdict.reason).toContain(`block ${block}`);
    }
  });

  it('needs the family rule: Gnosis AuRa and Avalanche headers do not verify by the plain Ethereum list', () => {
    for (const { chainId, header } of realHeaders.filter((r) => r.chainId === 100 || r.chainId === 43114)) {
      expect(verifyChainHeader(1, header)).toMatchObject({ verified: false, failed: true, rule: 'ethereum' });
      expect(verifyChainHeader(chainId, header).verified).toBe(true);
    }
  });

  it("reads Gnosis' AuRa fields under Erigon's names too (auraStep as hex, auraSeal; older AuRaStep, AuRaSeal)", () => {
    const { step, signature, ...rest } = realHeaders.find((r) => r.chainId === 100)!.header as { step: number; signature: string };
    const hexStep = `0x${step.toString(16)}`;
    expect(verifyChainHeader(100, { ...rest, auraStep: hexStep, auraSeal: signature }).verified).toBe(true);
    expect(verifyChainHeader(100, { ...rest, AuRaStep: hexStep, AuRaSeal: signature }).verified).toBe(true);
    expect(verifyChainHeader(100, { ...rest, auraStep: `0x${(step + 1).toString(16)}`, auraSeal: signature }).verified).toBe(false);
  });

  it('ignores keys a node adds that are not in its chain list (Arbitrum sendRoot, sizes, transactions)', () => {
    const arbitrum = realHeaders.find((r) => r.chainId === 42161)!.header;
    expect(verifyChainHeader(42161, { ...arbitrum, sendRoot: '0x00', size: '0x1', transactions: [] }).verified).toBe(true);
  });

  it('verifies the mainnet fixture by the Ethereum rule', () => {
    const mainnet = readHeaders(join(FIXTURE_DIR, 'headers.jsonl'));
    expect(mainnet.filter((h) => !verifyChainHeader(1, h).verified)).toEqual([]);
  });

  it('reports a field that cannot be encoded as the header failing, naming the field', () => {
    const base = realHeaders.find((r) => r.chainId === 8453)!.header;
    const verdict = verifyChainHeader(8453, { ...base, gasUsed: '0x0012' });
    expect(verdict).toMatchObject({ verified: false, failed: true });
    expect(verdict.verified === false && verdict.reason).toMatch(/gasUsed/);
  });

  it('keeps headers of chains without a known rule unverified, with the reason', () => {
    const base = realHeaders[0]!.header;
    expect(verifyChainHeader(324, base)).toMatchObject({ verified: false, failed: false, reason: expect.stringMatching(/zkSync Era/) });
    expect(verifyChainHeader(999_999, base)).toMatchObject({ verified: false, failed: false, reason: expect.stringMatching(/chain 999999/) });
  });
});
