import type { TransferRecord } from '../dataset/types.ts';
import type { HeaderJson } from '../eth/header-fields.ts';
import { toQuantity } from '../eth/hex.ts';

/**
 * Bad data the reference server serves on demand (`POST /__control/corrupt`), so the exporter can be shown
 * to handle each kind. The transforms here are pure: they take a page or a header and give a damaged copy.
 */
export const PAGE_CORRUPTIONS = [
  'bad-address',
  'negative-value',
  'non-numeric-value',
  'overflow-value',
  'missing-field',
  'bad-timestamp',
  'count-mismatch',
  'duplicate-in-page',
  'duplicate-across-pages',
  'conflicting-duplicate',
  'repeating-page-key',
] as const;
/** getTokenTransfers answers that are not a page at all. */
export const BODY_CORRUPTIONS = ['html-200', 'huge-body'] as const;
/** `erigon_getHeaderByHash` and `eth_getBlockByHash` results. */
export const HEADER_CORRUPTIONS = ['header-bad-hash', 'header-wrong-number'] as const;
/** `eth_getLogs` results: the node-source analogues of the page kinds (logs-corruption.ts). */
export const LOGS_CORRUPTIONS = [
  'logs-bad-address',
  'logs-non-hex-value',
  'logs-short-value',
  'logs-missing-field',
  'logs-bad-timestamp',
  'logs-duplicate',
  'logs-outside-range',
  'logs-other-contract',
  'logs-bloom',
] as const;
/** `eth_getLogs` answers that are not a JSON-RPC answer at all: the node-source analogues of the body kinds. */
export const LOGS_BODY_CORRUPTIONS = ['logs-html-200', 'logs-huge-body'] as const;
/** getTokenTransfers pages with a transfer moved into another of their blocks, whose logsBloom rules it out (wrong-block.ts). */
export const BLOCK_CORRUPTIONS = ['wrong-block'] as const;
export const CORRUPTION_KINDS = [...PAGE_CORRUPTIONS, ...BODY_CORRUPTIONS, ...HEADER_CORRUPTIONS, ...LOGS_CORRUPTIONS, ...LOGS_BODY_CORRUPTIONS, ...BLOCK_CORRUPTIONS] as const;

export type PageCorruption = (typeof PAGE_CORRUPTIONS)[number];
export type HeaderCorruption = (typeof HEADER_CORRUPTIONS)[number];
export type LogsCorruption = (typeof LOGS_CORRUPTIONS)[number];
export type CorruptionKind = (typeof CORRUPTION_KINDS)[number];

/** What `POST /__control/corrupt` arms: the next `times` matching answers get `kind`. */
export interface CorruptionOrder {
  kind: CorruptionKind;
  /**
   * Only answers about this contract (lower case): getTokenTransfers pages of it, `eth_getLogs` calls that ask
   * for it; every contract when absent. Header kinds ignore it.
   */
  contract?: string;
  times: number;
}

/** One corruption served, as `GET /__control/corrupt` lists it. */
export interface ServedCorruption {
  kind: CorruptionKind;
  contract?: string;
  /** The block the damaged row, log or header belongs to, when there is one. */
  block?: number;
  /** The log index of the damaged (or added) log, for the `eth_getLogs` kinds that damage one. */
  log?: number;
  /** The field that was damaged (`tokenTransfers[3].value`, `count`, `header.number`, `result[2].data`, `body`, …). */
  field: string;
}

/** 2^256: one more than the largest uint256. */
export const OVERFLOW_VALUE = (1n << 256n).toString();

const KNOWN = new Set<string>(CORRUPTION_KINDS);
const ORDER_KEYS = new Set(['kind', 'contract', 'times']);

/**
 * Reads the body of `POST /__control/corrupt`: `{"kind", "contract"?, "times"?}`; `{"kind": "none"}` clears.
 *
 * @example parseCorruptionOrder({ kind: 'negative-value', times: 2 }) // → { order: { kind: 'negative-value', times: 2 } }
 * @example parseCorruptionOrder({ kind: 'none' }) // → { order: null }
 */
export function parseCorruptionOrder(body: unknown): { order: CorruptionOrder | null } | { error: string } {
  const usage = `body must be {"kind": K, "contract"?: "0x…", "times"?: N} with K one of none, ${CORRUPTION_KINDS.join(', ')}`;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { error: usage };
  const { kind, contract, times } = body as Record<string, unknown>;
  const unknown = Object.keys(body).filter((k) => !ORDER_KEYS.has(k));
  if (unknown.length) return { error: `unknown key(s) ${unknown.join(', ')}: ${usage}` };
  if (kind === 'none') return { order: null };
  if (typeof kind !== 'string' || !KNOWN.has(kind)) return { error: `unknown kind ${JSON.stringify(kind)}: ${usage}` };
  if (contract !== undefined && (typeof contract !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(contract))) {
    return { error: `contract must be a 0x address of 40 hex digits, got ${JSON.stringify(contract)}` };
  }
  if (times !== undefined && (typeof times !== 'number' || !Number.isSafeInteger(times) || times < 1)) {
    return { error: `times must be a positive integer, got ${JSON.stringify(times)}` };
  }
  return {
    order: { kind: kind as CorruptionKind, ...(contract !== undefined && { contract: contract.toLowerCase() }), times: times ?? 1 },
  };
}

/** A getTokenTransfers body as parsed JSON. */
export interface PageJson {
  count: number;
  nextPageKey?: string;
  tokenTransfers: Record<string, unknown>[];
  [key: string]: unknown;
}

export interface PageContext {
  /** The `pageKey` the request carried. */
  pageKey?: string | undefined;
  /** The last row of the page before (the row the request's `pageKey` points after). */
  previousRow?: TransferRecord | undefined;
}

/**
 * A damaged copy of a page, or `undefined` when `kind` cannot apply to it (no rows to damage, no page
 * before it): the order then waits for the next answer. Row damage goes to the middle row.
 *
 * @example corruptPage('negative-value', page, {}) // → { page: <copy, tokenTransfers[1].value "-5">, block: 17000000, field: 'tokenTransfers[1].value' }
 */
export function corruptPage(kind: PageCorruption, input: PageJson, context: PageContext): { page: PageJson; block?: number; field: string } | undefined {
  const rows = input.tokenTransfers.map((r) => ({ ...r }));
  const page: PageJson = { ...input, tokenTransfers: rows };
  const i = Math.floor((rows.length - 1) / 2);
  const row = rows[i];
  const blockOf = (r: Record<string, unknown>) => r.blockNumber as number;
  const damage = (field: string, change: (r: Record<string, unknown>) => void) => {
    if (!row) return undefined;
    change(row);
    return { page, block: blockOf(row), field: `tokenTransfers[${i}].${field}` };
  };
  switch (kind) {
    case 'bad-address':
      return damage('fromAddress', (r) => {
        r.fromAddress = String(r.fromAddress).slice(0, -1);
      });
    case 'negative-value':
      return damage('value', (r) => {
        r.value = `-${r.value === '0' ? '1' : String(r.value)}`;
      });
    case 'non-numeric-value':
      return damage('value', (r) => {
        r.value = 'NaN';
      });
    case 'overflow-value':
      return damage('value', (r) => {
        r.value = OVERFLOW_VALUE;
      });
    case 'missing-field':
      return damage('transactionHash', (r) => void delete r.transactionHash);
    case 'bad-timestamp':
      return damage('blockTimestamp', (r) => {
        r.blockTimestamp = String(r.blockTimestamp).slice(0, 19).replace('T', ' ');
      });
    case 'count-mismatch':
      page.count = rows.length + 1;
      return { page, ...(rows[0] && { block: blockOf(rows[0]) }), field: 'count' };
    case 'duplicate-in-page':
      if (!row) return undefined;
      rows.splice(i + 1, 0, { ...row });
      page.count = rows.length;
      return { page, block: blockOf(row), field: `tokenTransfers[${i + 1}]` };
    case 'duplicate-across-pages':
    case 'conflicting-duplicate': {
      const previous = context.previousRow;
      if (!previous) return undefined;
      const repeated = transferJson(previous);
      if (kind === 'conflicting-duplicate') repeated.value = previous.value === '0' ? '1' : (BigInt(previous.value) - 1n).toString();
      rows.unshift(repeated);
      page.count = rows.length;
      return { page, block: previous.blockNumber, field: kind === 'conflicting-duplicate' ? 'tokenTransfers[0].value' : 'tokenTransfers[0]' };
    }
    case 'repeating-page-key':
      if (context.pageKey === undefined) return undefined;
      page.nextPageKey = context.pageKey;
      return { page, ...(rows.at(-1) && { block: blockOf(rows.at(-1)!) }), field: 'nextPageKey' };
  }
}

/**
 * A damaged copy of a header: `header-bad-hash` adds one to `gasUsed`, so keccak256(RLP) no longer equals
 * `hash`; `header-wrong-number` adds one to `number`.
 *
 * @example corruptHeader('header-wrong-number', header) // → { header: { …header, number: '0x65' }, block: 100, field: 'header.number' }
 */
export function corruptHeader(kind: HeaderCorruption, input: HeaderJson): { header: HeaderJson; block: number; field: string } {
  const block = Number(BigInt(input.number ?? '0x0'));
  if (kind === 'header-bad-hash') {
    return { header: { ...input, gasUsed: toQuantity(BigInt(input.gasUsed ?? '0x0') + 1n) }, block, field: 'header.gasUsed' };
  }
  return { header: { ...input, number: toQuantity(BigInt(block) + 1n) }, block, field: 'header.number' };
}

/** A transfer as a page row: the spec's key order, without `contractAddress`. */
export function transferJson(t: TransferRecord): Record<string, unknown> {
  const { contractAddress: _contract, ...row } = t;
  return {
    fromAddress: row.fromAddress,
    toAddress: row.toAddress,
    value: row.value,
    blockHash: row.blockHash,
    blockNumber: row.blockNumber,
    blockTimestamp: row.blockTimestamp,
    transactionHash: row.transactionHash,
    transactionIndex: row.transactionIndex,
    logIndex: row.logIndex,
  };
}
