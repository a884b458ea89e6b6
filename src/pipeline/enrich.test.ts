import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { changedField, expectedOf, FIXTURE_DIR, readChainHeaders, readJsonLines, type RawHeader } from '../../test/helpers/fixtures.ts';
import { systemClock } from '../common/clock.ts';
import { BadResponseError } from '../source/errors.ts';
import { checkHeader, type HeaderChecker } from '../source/header-check.ts';
import type { Source } from '../source/source.ts';
import type { Warehouse } from '../warehouse/db.ts';
import type { HeaderToStore, MissingHeader } from '../warehouse/headers.ts';
import { fetchGroup, type EnrichDeps, type VerifiedHeader } from './enrich.ts';
import { UnverifiedHeaderError } from './errors.ts';
import { createHeaderPolicy, type HeaderPolicyJob } from './header-policy.ts';

/** Real headers by chain: every chain of test/fixtures/chains, and the mainnet fixture's as chain 1. */
const byChain = new Map<number, RawHeader[]>([[1, readJsonLines<RawHeader>(`${FIXTURE_DIR}/headers.jsonl`)]]);
for (const { chainId, header } of readChainHeaders()) byChain.set(chainId, [...(byChain.get(chainId) ?? []), header]);

/** The block the transfers name for a header: its hash, number and time. */
const blockOf = (h: RawHeader): MissingHeader => ({ ...expectedOf(h), contracts: ['0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48'] });

/**
 * What `fetchGroup` needs, without I/O: a source answering `headers` by hash, a header store that keeps what it is
 * given (the warehouse's own is tested against PostgreSQL in test/headers-store.test.ts), and a logger whose lines
 * are kept.
 */
function harness(headers: readonly RawHeader[], checks?: Source['checks']) {
  const writes: (readonly HeaderToStore[])[] = [];
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level: 'warn' }, sink);
  const answers = new Map(headers.map((h) => [h.hash, h]));
  const source: Pick<Source, 'headersByHash' | 'checks'> = {
    headersByHash: async (hashes) => new Map(hashes.map((hash) => [hash, answers.get(hash) ?? null])),
    ...(checks && { checks }),
  };
  const deps: EnrichDeps = {
    warehouse: {} as Warehouse,
    source,
    logger,
    clock: systemClock,
    storeHeaders: async (_chain, batch) => {
      writes.push(batch);
      return batch.length;
    },
  };
  const seen: VerifiedHeader<MissingHeader>[] = [];
  const fetch = (job: HeaderPolicyJob, policy = createHeaderPolicy(job, logger), group = headers) =>
    fetchGroup(deps, { job: job.name, runId: '7', headers: policy }, group.map(blockOf), (verified) => {
      seen.push(...verified);
    });
  const inserts = () => writes.length;
  return { fetch, seen, lines, inserts, logger };
}

describe("fetchGroup: the run's header check", () => {
  it.each([...byChain].map(([chain, headers]) => [chain, headers.length, headers] as const))(
    'checks the real headers of chain %i (%i) by its chain rule, all verified, and stores them in one write',
    async (chain, _count, headers) => {
      const run = harness(headers);
      await run.fetch({ name: `chain-${chain}`, chain });
      expect(run.seen.map((v) => [v.block.number, v.checked.hashVerified, v.checked.unverifiedReason])).toEqual(headers.map((h) => [Number(BigInt(h.number)), true, null]));
      expect(run.inserts()).toBe(1);
      expect(run.lines).toEqual([]);
    },
  );

  it('fails a real header with one field changed, naming its block, and stores nothing', async () => {
    for (const [chain, headers] of byChain) {
      const header = headers[0]!;
      const run = harness([changedField(header, 'stateRoot')]);
      const err = await run.fetch({ name: 'altered', chain }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, `chain ${chain}`).toBeInstanceOf(BadResponseError);
      expect((err as BadResponseError).problems, `chain ${chain}`).toEqual([
        expect.stringMatching(new RegExp(`block ${Number(BigInt(header.number))} \\(${header.hash}\\), header: keccak256 of its RLP fields is .*chain ${chain}'s`)),
      ]);
      expect(run.inserts(), `chain ${chain}`).toBe(0);
    }
  });

  it('keeps the headers of a chain without a known rule unverified, with the reason, one write per group, saying so once for the run', async () => {
    const headers = byChain.get(1)!.slice(0, 9);
    const run = harness(headers);
    const job = { name: 'zk', chain: 324 };
    const policy = createHeaderPolicy(job, run.logger);
    // three groups of one run
    for (let i = 0; i < headers.length; i += 3) await run.fetch(job, policy, headers.slice(i, i + 3));
    expect(run.seen).toHaveLength(9);
    for (const { checked } of run.seen)
      expect(checked).toMatchObject({ hashVerified: false, unverifiedReason: expect.stringMatching(/^zkSync Era block hashes are not keccak256/) });
    expect(run.inserts()).toBe(3);
    expect(run.lines).toEqual([
      expect.objectContaining({ msg: 'headers stored unverified', job: 'zk', chain: 324, reason: expect.stringMatching(/^zkSync Era/), block: Number(BigInt(headers[0]!.number)) }),
    ]);
  });

  it('under "verifyHeaders": "require", fails on a header it cannot verify, naming block and chain, and stores nothing', async () => {
    const header = byChain.get(8453)![0]!;
    const run = harness([header]);
    const err = await run.fetch({ name: 'strict', chain: 999_999, verifyHeaders: 'require' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnverifiedHeaderError);
    expect((err as Error).message).toMatch(
      new RegExp(
        `^The header of block ${Number(BigInt(header.number))} \\(${header.hash}\\) of chain 999999 .*cannot be verified: chain 999999's block hash rule is not one this exporter knows\\.`,
      ),
    );
    expect(run.inserts()).toBe(0);
    expect(run.seen).toEqual([]);
  });

  it("reuses the source's own header check when it checks for the run's chain, and only then", async () => {
    const headers = byChain.get(10)!;
    let asked = 0;
    const counted: HeaderChecker = (raw, expected) => {
      asked++;
      return checkHeader(10, raw, expected);
    };
    await harness(headers, { chain: 10, checkHeader: counted }).fetch({ name: 'op', chain: 10 });
    expect(asked).toBe(headers.length);
    // a source checking for another chain: the run checks by its own chain's rule
    const run = harness(headers, { chain: 1, checkHeader: counted });
    await run.fetch({ name: 'op', chain: 10 });
    expect(asked).toBe(headers.length);
    expect(run.seen.every((v) => v.checked.hashVerified)).toBe(true);
  });
});
