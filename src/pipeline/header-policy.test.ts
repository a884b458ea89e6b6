import { describe, expect, it } from 'vitest';
import { ConfigError } from '../common/errors.ts';
import type { HeaderJson } from '../eth/header-fields.ts';
import type { CheckedHeader } from '../source/header-check.ts';
import { UnverifiableChainError, UnverifiedHeaderError } from './errors.ts';
import { createHeaderPolicy, requireVerifiableChain, type AdmittedHeader } from './header-policy.ts';

const ZKSYNC = 'zkSync Era block hashes are not keccak256 of an RLP header: they cannot be verified from the header alone';

/** A checked header of block `number`: verified, or not with `reason`. */
function admitted(number: number, reason?: string): AdmittedHeader {
  const hash = `0x${number.toString(16).padStart(64, '0')}`;
  const checked: CheckedHeader = {
    header: { hash, number: `0x${number.toString(16)}` } as HeaderJson,
    extra: null,
    hashVerified: reason === undefined,
    unverifiedReason: reason ?? null,
  };
  return { block: { number, hash, contracts: ['0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48'] }, checked };
}

/** A logger that keeps what it is told to warn. */
function warnings() {
  const lines: Record<string, unknown>[] = [];
  return { logger: { warn: (line: Record<string, unknown>) => lines.push(line) }, lines };
}

describe('createHeaderPolicy', () => {
  it("checks by the job's chain, chain 1 for a job that names none", () => {
    const { logger } = warnings();
    expect(createHeaderPolicy({ name: 'base', chain: 8453 }, logger).chain).toBe(8453);
    expect(createHeaderPolicy({ name: 'old', chain: undefined }, logger).chain).toBe(1);
  });

  it('says nothing of verified headers', () => {
    const { logger, lines } = warnings();
    createHeaderPolicy({ name: 'nightly', chain: 1 }, logger).admit([admitted(1), admitted(2)]);
    expect(lines).toEqual([]);
  });

  it('warns once per run that headers are stored unverified, however many there are, with the job, chain and reason', () => {
    const { logger, lines } = warnings();
    const policy = createHeaderPolicy({ name: 'zk', chain: 324, verifyHeaders: 'allow-unverified' }, logger);
    policy.admit([admitted(10), admitted(11, ZKSYNC), admitted(12, ZKSYNC)]);
    policy.admit([admitted(13, ZKSYNC)]);
    policy.admit([admitted(14, 'another reason')]);
    expect(lines).toEqual([
      {
        msg: 'headers stored unverified',
        job: 'zk',
        chain: 324,
        reason: ZKSYNC,
        block: 11,
        hash: admitted(11).block.hash,
        note: expect.stringContaining('"verifyHeaders": "require"'),
      },
    ]);
  });

  it('allows unverified headers when the job says nothing of verifyHeaders', () => {
    const { logger, lines } = warnings();
    expect(() => createHeaderPolicy({ name: 'zk', chain: 324 }, logger).admit([admitted(11, ZKSYNC)])).not.toThrow();
    expect(lines).toHaveLength(1);
  });

  it('under "require", fails on the first unverified header, naming its block, chain, why and what to do', () => {
    const { logger, lines } = warnings();
    const policy = createHeaderPolicy({ name: 'nightly', chain: 1, verifyHeaders: 'require' }, logger);
    policy.admit([admitted(20)]);
    const reason = 'block 21 does not hash to 0x… by the ethereum rule: its fields hash to 0x…, and it has fields the rule does not know (slotNumber): …';
    let caught: unknown;
    try {
      policy.admit([admitted(20), admitted(21, reason), admitted(22, 'later')]);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(UnverifiedHeaderError);
    const err = caught as UnverifiedHeaderError;
    expect(err.retryable).toBe(false);
    expect(err.message).toContain(
      `The header of block 21 (${admitted(21).block.hash}) of chain 1 (transfers of 0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48) cannot be verified: ${reason}.`,
    );
    expect(err.message).toContain('Job "nightly" sets "verifyHeaders": "require", so the run stops here and the header is not stored.');
    expect(err.message).toContain('remove "verifyHeaders": "require" from the job file');
    expect(err.details).toMatchObject({ job: 'nightly', chain: 1, block: 21, reason });
    expect(lines).toEqual([]);
  });
});

describe('requireVerifiableChain', () => {
  it('refuses a job that requires verified headers of a chain without a known rule, naming the chain and why, before anything is written', () => {
    let caught: unknown;
    try {
      requireVerifiableChain({ name: 'zk', chain: 324, verifyHeaders: 'require' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(UnverifiableChainError);
    expect(caught).toBeInstanceOf(ConfigError);
    const err = caught as UnverifiableChainError;
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain(`Job "zk" sets "verifyHeaders": "require", but no header of chain 324 can be verified: ${ZKSYNC}; nothing was written.`);
    expect(err.message).toContain('Remove "verifyHeaders": "require" from the job file');
    expect(() => requireVerifiableChain({ name: 'new', chain: 999_999, verifyHeaders: 'require' })).toThrow(/chain 999999's block hash rule is not one this exporter knows/);
  });

  it('lets through a chain with a rule, and any chain that allows unverified headers', () => {
    for (const chain of [1, 10, 8453, 42161, 137, 56, 100, 43114]) expect(() => requireVerifiableChain({ name: 'j', chain, verifyHeaders: 'require' })).not.toThrow();
    expect(() => requireVerifiableChain({ name: 'j', chain: undefined, verifyHeaders: 'require' })).not.toThrow();
    expect(() => requireVerifiableChain({ name: 'zk', chain: 324, verifyHeaders: 'allow-unverified' })).not.toThrow();
    expect(() => requireVerifiableChain({ name: 'zk', chain: 324 })).not.toThrow();
  });
});
