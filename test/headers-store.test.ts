import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../src/dataset/read.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import type { HeaderJson } from '../src/eth/header-fields.ts';
import { join } from 'node:path';
import { checkHeader } from '../src/source/header-check.ts';
import { insertHeaders } from '../src/warehouse/headers.ts';
import { CHAINS_FIXTURE_DIR, expectedOf, FIXTURE_DIR, readJsonLines, type RawHeader } from './helpers/fixtures.ts';
import { migratedWarehouse } from './helpers/exporter.ts';

describe('storing block headers', () => {
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  let headers: HeaderJson[];
  beforeAll(async () => {
    headers = (await readDataset(FIXTURE_DIR)).headers.slice(0, 3);
    target = await migratedWarehouse('headers_store');
  });
  afterAll(async () => {
    await target.drop();
  });

  it('keeps unknown header keys as JSON, NULL for absent fork fields, and stores a header once', async () => {
    const extra = { AuRaStep: '0x5', verkleProof: null, note: 'tab\there, "quoted", ünïcode' };
    const batch = headers.map((header, i) => ({ header, extra: i === 0 ? extra : null, hashVerified: i !== 2 }));
    expect(await insertHeaders(target.warehouse.db, 1, batch, '7')).toBe(3);
    expect(await insertHeaders(target.warehouse.db, 1, batch, '8')).toBe(0);
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
    expect(await insertHeaders(target.warehouse.db, 100, checked, '9')).toBe(aura.length);
    const rows = await target.warehouse.db.selectFrom('block_headers').selectAll().where('chain_id', '=', '100').orderBy('number').execute();
    expect(rows.map((r) => [r.hash, r.hash_verified, r.unverified_reason, r.mix_hash, r.nonce])).toEqual(aura.map((h) => [h.hash, true, null, null, null]));
    for (const [i, r] of rows.entries()) expect(r.extra_fields).toMatchObject({ step: aura[i]!.step, signature: aura[i]!.signature });
  });

  it('stores the same headers from two writers at once in opposite orders without a deadlock', async () => {
    // two runs over the same blocks each insert a batch; every writer inserts in hash order, so neither waits
    // on a row of the other while holding one the other waits on
    const many = generateSyntheticDataset({ seed: 41, blocks: 2000, tokens: 1, transfers: 10, startBlock: 9_000_000 }).headers;
    const batch = many.map((header) => ({ header, extra: null, hashVerified: true }));
    for (let round = 0; round < 3; round++) {
      const stored = await Promise.all([insertHeaders(target.warehouse.db, 1, batch, '1'), insertHeaders(target.warehouse.db, 1, [...batch].reverse(), '2')]);
      expect(stored[0] + stored[1]).toBe(many.length);
      await target.warehouse.db.deleteFrom('block_headers').where('number', '>=', '9000000').execute();
    }
  });
});
