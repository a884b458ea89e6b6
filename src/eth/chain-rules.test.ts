import { describe, expect, it } from 'vitest';
import { changedField, FIXTURE_DIR, readChainHeaders, readJsonLines } from '../../test/helpers/fixtures.ts';
import { replacedEthereumFields, unverifiableChainReason, verifyChainHeader } from './chain-rules.ts';

const realHeaders = readChainHeaders();

const EXPECTED_RULE: Record<number, string> = {
  10: 'op-stack',
  8453: 'op-stack',
  42161: 'arbitrum-nitro',
  137: 'polygon-bor',
  56: 'bnb-parlia',
  100: 'gnosis',
  43114: 'avalanche-coreth',
};

describe('verifyChainHeader', () => {
  it('has the real headers of seven chains to check, of every family', () => {
    expect([...new Set(realHeaders.map((r) => r.chainId))].sort((a, b) => a - b)).toEqual([10, 56, 100, 137, 8453, 42161, 43114]);
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
      const verdict = verifyChainHeader(chainId, changedField(header, key));
      const block = Number.parseInt(String(header.number), 16);
      expect(verdict).toMatchObject({ block, verified: false, failed: true, rule: EXPECTED_RULE[chainId] });
      expect(verdict.verified === false && verdict.reason).toContain(`block ${block}`);
    }
  });

  it('needs the family rule: Gnosis AuRa and Avalanche headers do not verify by the plain Ethereum list', () => {
    for (const { chainId, header } of realHeaders.filter((r) => r.chainId === 100 || r.chainId === 43114)) {
      // their family's fields are unknown to the Ethereum rule: unverifiable by it, naming them
      expect(verifyChainHeader(1, header)).toMatchObject({
        verified: false,
        failed: false,
        rule: 'ethereum',
        fields: expect.arrayContaining([chainId === 100 ? 'step' : 'extDataHash']),
      });
      expect(verifyChainHeader(chainId, header).verified).toBe(true);
    }
  });

  it("reads Gnosis' AuRa fields under Erigon's names too (auraStep as hex, auraSeal; older AuRaStep, AuRaSeal)", () => {
    const { step, signature, ...rest } = realHeaders.find((r) => r.chainId === 100)!.header as unknown as { step: number; signature: string };
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
    const mainnet = readJsonLines<Record<string, unknown>>(`${FIXTURE_DIR}/headers.jsonl`);
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

  it('keeps a header that does not hash by its rule but has a field the rule does not know unverifiable, naming the field', () => {
    const mainnet = readJsonLines<Record<string, unknown>>(`${FIXTURE_DIR}/headers.jsonl`);
    const cancun = mainnet.find((h) => h.parentBeaconBlockRoot !== null)!;
    const block = Number.parseInt(String(cancun.number), 16);
    // a field of a fork the encoder does not know yet changes the hash: the header cannot be verified, and is not called altered
    const verdict = verifyChainHeader(1, { ...cancun, slotNumber: '0x10', gasUsed: '0x1' });
    expect(verdict).toMatchObject({ block, verified: false, failed: false, rule: 'ethereum', fields: ['slotNumber'] });
    expect(verdict.verified === false && verdict.reason).toMatch(new RegExp(`^block ${block} does not hash to .* by the ethereum rule.*\\(slotNumber\\)`));
    // a key that is null, or one the family sends outside the hash, is no such field: the header fails
    expect(verifyChainHeader(1, { ...cancun, slotNumber: null, gasUsed: '0x1' })).toMatchObject({ failed: true, computed: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const arbitrum = realHeaders.find((r) => r.chainId === 42161)!.header;
    expect(verifyChainHeader(42161, changedField(arbitrum, 'gasUsed'))).toMatchObject({ failed: true, rule: 'arbitrum-nitro' });
  });

  it('names the field that cannot be encoded', () => {
    const base = realHeaders.find((r) => r.chainId === 8453)!.header;
    expect(verifyChainHeader(8453, { ...base, gasUsed: '0x0012' })).toMatchObject({
      failed: true,
      field: { key: 'gasUsed', message: expect.stringContaining('header field gasUsed') },
    });
  });

  it('says why a chain without a known rule has no verifiable header', () => {
    expect(unverifiableChainReason(324)).toMatch(/zkSync Era/);
    expect(unverifiableChainReason(999_999)).toMatch(/chain 999999's block hash rule is not one this exporter knows/);
    for (const chainId of [1, 10, 8453, 42161, 137, 56, 100, 43114, 11155111]) expect(unverifiableChainReason(chainId), String(chainId)).toBeUndefined();
  });

  it("lets Gnosis' AuRa headers go without mixHash and nonce, and no other header", () => {
    const aura = realHeaders.find((r) => r.chainId === 100)!.header;
    expect(replacedEthereumFields(100, aura)).toEqual(['mixHash', 'nonce']);
    const { step: _s, signature: _g, ...noAura } = aura;
    expect(replacedEthereumFields(100, noAura)).toEqual([]);
    expect(replacedEthereumFields(1, aura)).toEqual([]);
    expect(replacedEthereumFields(999_999, aura)).toEqual([]);
  });
});
