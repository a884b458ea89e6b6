import { describe, expect, it } from 'vitest';
import { DEFERRABLE_INDEXES, isAsMigrated, lookupIndex } from './deferred-indexes.ts';

describe('isAsMigrated', () => {
  const from = lookupIndex('token_transfers_from');
  const blockHash = lookupIndex('token_transfers_block_hash');

  it('knows a lookup index as pg_get_indexdef prints it after the migrations, in any schema', () => {
    expect(isAsMigrated(from, 'CREATE INDEX token_transfers_from ON public.token_transfers USING btree (from_address)')).toBe(true);
    expect(isAsMigrated(from, 'CREATE INDEX token_transfers_from ON warehouse.token_transfers USING btree (from_address)')).toBe(true);
    expect(isAsMigrated(blockHash, 'CREATE INDEX token_transfers_block_hash ON public.token_transfers USING btree (block_hash, chain_id)')).toBe(true);
  });

  it('does not take an index a user changed for it: other columns, method, options, name or table', () => {
    for (const definition of [
      // as 0001 made it, before 0009 keyed it by chain
      'CREATE INDEX token_transfers_block_hash ON public.token_transfers USING btree (block_hash)',
      'CREATE INDEX token_transfers_block_hash ON public.token_transfers USING hash (block_hash, chain_id)',
      'CREATE INDEX token_transfers_block_hash ON public.token_transfers USING btree (block_hash, chain_id) WITH (fillfactor=70)',
      'CREATE INDEX token_transfers_block_hash ON public.token_transfers USING btree (block_hash, chain_id) WHERE (chain_id = 1)',
      'CREATE INDEX other_name ON public.token_transfers USING btree (block_hash, chain_id)',
      'CREATE INDEX token_transfers_block_hash ON public.block_headers USING btree (block_hash, chain_id)',
    ]) {
      expect(isAsMigrated(blockHash, definition), definition).toBe(false);
    }
  });
});

describe('lookupIndex', () => {
  it('gives each deferrable index with the statements that drop it and build it as migrated', () => {
    expect(DEFERRABLE_INDEXES).toEqual(['token_transfers_block_hash', 'token_transfers_from', 'token_transfers_to']);
    expect(lookupIndex('token_transfers_to')).toMatchObject({ drop: 'DROP INDEX token_transfers_to', build: 'CREATE INDEX token_transfers_to ON token_transfers (to_address)' });
  });

  it('refuses a name it does not drop, saying what to do', () => {
    expect(() => lookupIndex('token_transfers_pkey')).toThrow(
      /deferred_indexes names "token_transfers_pkey", which is not an index a first load drops .*; build it by hand as its row's definition says, if it should exist, then delete its row/,
    );
  });
});
