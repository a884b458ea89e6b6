import type { HeaderJson } from '../eth/header-fields.ts';
import type { Dataset, TokenRecord, TransferRecord } from '../dataset/types.ts';

/**
 * The chain the reference server serves, indexed for its queries: transfers per contract newest first,
 * headers by hash (orphaned ones too, as real nodes keep them) and canonical headers by number.
 * Records are shared with the dataset it was built from, never copied: treat both as read-only.
 */
export interface ChainStore {
  /** Highest canonical block number, or -1 for an empty chain. */
  head(): number;
  headerByHash(hash: string): HeaderJson | undefined;
  isCanonical(hash: string): boolean;
  headerByNumber(number: number): HeaderJson | undefined;
  token(contract: string): TokenRecord | undefined;
  /** Transfers of one contract, ordered blockNumber desc then logIndex desc. */
  transfersOf(contract: string): readonly TransferRecord[];
  /** Every contract that has transfers, with how many. */
  contracts(): { contractAddress: string; transfers: number }[];
  /** The canonical chain as a dataset, headers by number, transfers in (blockNumber, logIndex) order. */
  truth(): Dataset;
  /** Makes `dataset` the canonical chain; `orphaned` headers stay answerable by hash. */
  replace(dataset: Dataset, orphaned: readonly HeaderJson[]): void;
  stats(): { headers: number; transfers: number; contracts: number; orphanedHeaders: number };
}

/**
 * Characters that appear in every valid transfer field (hex, decimal digits, ISO timestamps): text made
 * of them needs no JSON escaping, which lets the server write pages without JSON.stringify.
 */
const JSON_SAFE = /^[0-9A-Za-z:.x-]*$/;

export function createChainStore(initial: Dataset): ChainStore {
  let byContract = new Map<string, TransferRecord[]>();
  let canonical = new Map<string, HeaderJson>();
  let byNumber = new Map<number, HeaderJson>();
  let tokens: TokenRecord[] = [];
  let tokenByContract = new Map<string, TokenRecord>();
  let headers: HeaderJson[] = [];
  let headNumber = -1;
  let transferCount = 0;
  const orphans = new Map<string, HeaderJson>();

  function load(dataset: Dataset) {
    headers = [...dataset.headers].sort((a, b) => Number(BigInt(a.number!) - BigInt(b.number!)));
    canonical = new Map(headers.map((h) => [h.hash, h]));
    byNumber = new Map(headers.map((h) => [Number(BigInt(h.number!)), h]));
    headNumber = headers.length ? Number(BigInt(headers[headers.length - 1]!.number!)) : -1;
    tokens = [...dataset.tokens];
    tokenByContract = new Map(tokens.map((t) => [t.contractAddress, t]));
    byContract = new Map();
    for (const t of dataset.transfers) {
      assertJsonSafe(t);
      let list = byContract.get(t.contractAddress);
      if (!list) {
        list = [];
        byContract.set(t.contractAddress, list);
      }
      list.push(t);
    }
    for (const list of byContract.values()) list.sort(newestFirst);
    transferCount = dataset.transfers.length;
  }
  load(initial);

  return {
    head: () => headNumber,
    headerByHash: (hash) => canonical.get(hash) ?? orphans.get(hash),
    isCanonical: (hash) => canonical.has(hash),
    headerByNumber: (n) => byNumber.get(n),
    token: (contract) => tokenByContract.get(contract),
    transfersOf: (contract) => byContract.get(contract) ?? [],
    contracts: () => [...byContract].map(([contractAddress, list]) => ({ contractAddress, transfers: list.length })),
    truth() {
      const transfers: TransferRecord[] = [];
      for (const list of byContract.values()) for (const t of list) transfers.push(t);
      transfers.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
      return { headers: [...headers], transfers, tokens: [...tokens] };
    },
    replace(dataset, orphaned) {
      for (const h of orphaned) orphans.set(h.hash, h);
      load(dataset);
      for (const h of headers) orphans.delete(h.hash);
    },
    stats: () => ({
      headers: headers.length,
      transfers: transferCount,
      contracts: byContract.size,
      orphanedHeaders: orphans.size,
    }),
  };
}

function assertJsonSafe(t: TransferRecord): void {
  for (const key of ['fromAddress', 'toAddress', 'value', 'blockHash', 'blockTimestamp', 'transactionHash'] as const) {
    if (!JSON_SAFE.test(t[key])) {
      throw new TypeError(`transfer ${t.transactionHash}/${t.logIndex}: field ${key} is not hex, decimal or ISO text`);
    }
  }
}

function newestFirst(a: TransferRecord, b: TransferRecord): number {
  return b.blockNumber - a.blockNumber || b.logIndex - a.logIndex;
}
