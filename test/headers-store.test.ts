import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../src/dataset/read.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import type { HeaderJson } from '../src/eth/header-fields.ts';
import { join } from 'node:path';
import { checkHeader } from '../src/source/header-check.ts';
import { insertHeaders, knownHeaders, storeHeaders, type HeaderToStore } from '../src/warehouse/headers.ts';
import { CHAINS_FIXTURE_DIR, expectedOf, FIXTURE_DIR, readJsonLines, type RawHeader } from './helpers/fixtures.ts';
import { migratedWarehouse } from './helpers/exporter.ts';

type Store = (target: Awaited<ReturnType<typeof migratedWarehouse>>, chainId: number, batch: readonly HeaderToStore[], runId: string) => Promise<number>;
const WRITERS: [string, Store][] = [
  ['INSERT … ON CONFLICT (insertHeaders)', (t, chainId, batch, runId) => insertHeaders(t.warehouse.db, chainId, batch, runId)],
  ['COPY, falling back to the insert (storeHeaders)', (t, chainId, batch, runId) => storeHeaders(t.warehouse, chainId, batch, runId)],
];

describe.each(WRITERS)('storing block headers by %s', (name, store) => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  let headers: HeaderJson[];
  beforeAll(async () => {
    headers = (await readDataset(FIXTURE_DIR)).headers.slice(0, 3);
    target = await migratedWarehouse(`headers_store_${name.startsWith('COPY') ? 'copy' : 'insert'}`);
  });
  afterAll(async () => {
    await target.drop();
  });

  it('keeps unknown header keys as JSON, NULL for absent fork fields, and stores a header once', async () => {
    const extra = { AuRaStep: '0x5', verkleProof: null, note: 'tab\there, "quoted", ünïcode' };
    const batch = headers.map((header, i) => ({ header, extra: i === 0 ? extra : null, hashVerified: i !== 2 }));
    expect(await store(target, 1, batch, '7')).toBe(3);
    expect(await store(target, 1, batch, '8')).toBe(0);
    const rows = await target.warehouse.db.selectFrom('block_headers').selectAll().orderBy('number').execute();
    const byHash = new Map(rows.map((r) => [r.hash, r]));
    expect(byHash.get(headers[0]!.hash)!.extra_fields).toEqual(extra);
    expect(byHash.get(headers[1]!.hash)!.extra_fields).toBeNull();
    expect(byHash.get(headers[2]!.hash)!.hash_verified).toBe(false);
    for (const h of headers) {
      const row = byHash.get(h.hash)!;
      expect(row.fetched_by_run).toBe('7');
      expect(row.number).toBe(BigInt(h.number!).toString());
      expect(row.difficulty).toBe(BigInt(h.difficulty!).toString());
      expect(row.base_fee_per_gas).toBe(h.baseFeePerGas === null ? null : BigInt(h.baseFeePerGas).toString());
      expect(row.withdrawals_root).toBe(h.withdrawalsRoot);
      expect(row.logs_bloom).toBe(h.logsBloom);
    }
  });

  it("stores a Gnosis header under AuRa, verified by its chain's rule, with no mixHash or nonce and its step and signature kept", async () => {
    const raws = readJsonLines<RawHeader>(join(CHAINS_FIXTURE_DIR, '100', 'headers.jsonl'));
    const aura = raws.filter((h) => h.step !== undefined).sort((a, b) => Number(BigInt(a.number) - BigInt(b.number)));
    expect(aura.length).toBeGreaterThan(0);
    const checked = aura.map((raw) => checkHeader(100, raw, expectedOf(raw)));
    expect(await store(target, 100, checked, '9')).toBe(aura.length);
    const rows = await target.warehouse.db.selectFrom('block_headers').selectAll().where('chain_id', '=', '100').orderBy('number').execute();
    expect(rows.map((r) => [r.hash, r.hash_verified, r.unverified_reason, r.mix_hash, r.nonce])).toEqual(aura.map((h) => [h.hash, true, null, null, null]));
    for (const [i, r] of rows.entries()) expect(r.extra_fields).toMatchObject({ step: aura[i]!.step, signature: aura[i]!.signature });
  });

  it('stores the rest of a batch some of whose headers are stored already, each once', async () => {
    const more = generateSyntheticDataset({ seed: 43, blocks: 40, tokens: 1, transfers: 10, startBlock: 8_000_000 }).headers;
    const batch = more.map((header) => ({ header, extra: null, hashVerified: true, unverifiedReason: null }));
    expect(await store(target, 1, batch.slice(10, 20), '3')).toBe(10);
    expect(await store(target, 1, batch, '4')).toBe(more.length - 10);
    const rows = await target.warehouse.db
      .selectFrom('block_headers')
      .select(['hash', 'fetched_by_run'])
      .where('number', '>=', '8000000')
      .where('number', '<', '9000000')
      .execute();
    expect(rows).toHaveLength(more.length);
    expect(rows.filter((r) => r.fetched_by_run === '3')).toHaveLength(10);
  });

  it('keeps the reason an unverified header gives, tabs, newlines and backslashes included', async () => {
    const [header] = generateSyntheticDataset({ seed: 44, blocks: 2, tokens: 1, transfers: 2, startBlock: 7_000_000 }).headers;
    const reason = 'fields the rule does not know:\tfoo\nbar \\ baz\r';
    expect(await store(target, 1, [{ header: header!, extra: { 'odd\tkey': 'a\\b\nc' }, hashVerified: false, unverifiedReason: reason }], '5')).toBe(1);
    const row = await target.warehouse.db.selectFrom('block_headers').selectAll().where('hash', '=', header!.hash).executeTakeFirstOrThrow();
    expect(row.unverified_reason).toBe(reason);
    expect(row.extra_fields).toEqual({ 'odd\tkey': 'a\\b\nc' });
  });

  it('stores the same headers from two writers at once in opposite orders without a deadlock', async () => {
    // two runs over the same blocks each insert a batch; every writer inserts in hash order, so neither waits
    // on a row of the other while holding one the other waits on
    const many = generateSyntheticDataset({ seed: 41, blocks: 2000, tokens: 1, transfers: 10, startBlock: 9_000_000 }).headers;
    const batch = many.map((header) => ({ header, extra: null, hashVerified: true }));
    for (let round = 0; round < 3; round++) {
      const stored = await Promise.all([store(target, 1, batch, '1'), store(target, 1, [...batch].reverse(), '2')]);
      expect(stored[0] + stored[1]).toBe(many.length);
      await target.warehouse.db.deleteFrom('block_headers').where('number', '>=', '9000000').execute();
    }
  });
});

describe('looking up stored headers (knownHeaders)', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    target = await migratedWarehouse('headers_known');
  });
  afterAll(async () => {
    await target.drop();
  });

  it("finds the stored blocks of a list by hash at their number, with each one's time and bloom, and none of another chain's", async () => {
    const headers = generateSyntheticDataset({ seed: 45, blocks: 30, tokens: 1, transfers: 10, startBlock: 6_000_000 }).headers;
    const batch = headers.map((header) => ({ header, extra: null, hashVerified: true }));
    // the even blocks stored on chain 1, the odd ones on chain 10
    expect(
      await insertHeaders(
        target.warehouse.db,
        1,
        batch.filter((_, i) => i % 2 === 0),
        '1',
      ),
    ).toBe(15);
    expect(
      await insertHeaders(
        target.warehouse.db,
        10,
        batch.filter((_, i) => i % 2 === 1),
        '1',
      ),
    ).toBe(15);
    const refs = headers.map((h) => ({ hash: h.hash, number: Number(h.number) }));
    const known = await knownHeaders(target.warehouse.db, 1, refs.slice(3, 20));
    const expected = headers.slice(3, 20).filter((h) => (Number(h.number) - 6_000_000) % 2 === 0);
    expect([...known.keys()].sort()).toEqual(expected.map((h) => h.hash).sort());
    for (const h of expected) {
      expect(known.get(h.hash)).toEqual({ number: Number(h.number), seconds: BigInt(h.timestamp!).toString(), logsBloom: h.logsBloom });
    }
    expect((await knownHeaders(target.warehouse.db, 10, refs.slice(0, 2))).size).toBe(1);
    expect((await knownHeaders(target.warehouse.db, 1, [])).size).toBe(0);
  });

  it('does not take a stored header for a block the rows put at another number', async () => {
    const [h0, h1] = generateSyntheticDataset({ seed: 46, blocks: 2, tokens: 1, transfers: 2, startBlock: 5_000_000 }).headers;
    await insertHeaders(
      target.warehouse.db,
      1,
      [
        { header: h0!, extra: null, hashVerified: true },
        { header: h1!, extra: null, hashVerified: true },
      ],
      '1',
    );
    const known = await knownHeaders(target.warehouse.db, 1, [
      { hash: h0!.hash, number: Number(h0!.number) + 7 },
      { hash: h1!.hash, number: Number(h1!.number) },
    ]);
    expect([...known.keys()]).toEqual([h1!.hash]);
    // each asked at the other's number: both numbers and both hashes are stored, yet neither block is
    const swapped = await knownHeaders(target.warehouse.db, 1, [
      { hash: h0!.hash, number: Number(h1!.number) },
      { hash: h1!.hash, number: Number(h0!.number) },
    ]);
    expect(swapped.size).toBe(0);
  });
});
