import type { HeaderJson } from '../eth/header-fields.ts';
import type { Dataset, TokenRecord, TransferRecord } from '../dataset/types.ts';

/** A transfer as `getTokenTransfers` serves it: the dataset record without `contractAddress`, keys in the spec's order. */
export interface ServedTransfer {
  fromAddress: string;
  toAddress: string;
  value: string;
  blockHash: string;
  blockNumber: number;
  blockTimestamp: string;
  transactionHash: string;
  transactionIndex: number;
  logIndex: number;
}

/**
 * The chain the reference server serves, indexed for its queries: transfers per contract newest first,
 * headers by hash (orphaned ones too, as real nodes keep them) and canonical headers by number.
 */
export interface ChainStore {
  /** Highest canonical block number, or -1 for an empty chain. */
  head(): number;
  headerByHash(hash: string): HeaderJson | undefined;
  isCanonical(hash: string): boolean;
  headerByNumber(number: number): HeaderJson | undefined;
  token(contract: string): TokenRecord | undefined;
  /** Transfers of one contract, ordered blockNumber desc then logIndex desc. Do not modify. */
  transfersOf(contract: string): readonly ServedTransfer[];
  /** The canonical chain as a dataset, transfers in (blockNumber, logIndex) order. */
  truth(): Dataset;
  /** Makes `dataset` the canonical chain; `orphaned` headers stay answerable by hash. */
  replace(dataset: Dataset, orphaned: readonly HeaderJson[]): void;
  stats(): { headers: number; transfers: number; contracts: number; orphanedHeaders: number };
}

/** Builds the indexes over a dataset. The dataset's transfer records are not kept (served copies are). */
export function createChainStore(initial: Dataset): ChainStore {
  let byContract = new Map<string, ServedTransfer[]>();
  let canonical = new Map<string, HeaderJson>();
  let byNumber = new Map<number, HeaderJson>();
  let tokens = new Map<string, TokenRecord>();
  let headers: HeaderJson[] = [];
  let headNumber = -1;
  let transferCount = 0;
  const orphans = new Map<string, HeaderJson>();

  function load(dataset: Dataset) {
    headers = [...dataset.headers].sort((a, b) => Number(BigInt(a.number!) - BigInt(b.number!)));
    canonical = new Map(headers.map((h) => [h.hash, h]));
    byNumber = new Map(headers.map((h) => [Number(BigInt(h.number!)), h]));
    headNumber = headers.length ? Number(BigInt(headers[headers.length - 1]!.number!)) : -1;
    tokens = new Map(dataset.tokens.map((t) => [t.contractAddress, t]));
    byContract = new Map();
    for (const t of dataset.transfers) {
      let list = byContract.get(t.contractAddress);
      if (!list) byContract.set(t.contractAddress, (list = []));
      list.push(served(t));
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
    token: (contract) => tokens.get(contract),
    transfersOf: (contract) => byContract.get(contract) ?? [],
    truth() {
      const transfers: TransferRecord[] = [];
      for (const [contractAddress, list] of byContract) {
        for (const t of list) transfers.push({ contractAddress, ...t });
      }
      transfers.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
      return { headers: [...headers], transfers, tokens: [...tokens.values()] };
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

function served(t: TransferRecord): ServedTransfer {
  return {
    fromAddress: t.fromAddress,
    toAddress: t.toAddress,
    value: t.value,
    blockHash: t.blockHash,
    blockNumber: t.blockNumber,
    blockTimestamp: t.blockTimestamp,
    transactionHash: t.transactionHash,
    transactionIndex: t.transactionIndex,
    logIndex: t.logIndex,
  };
}

function newestFirst(a: ServedTransfer, b: ServedTransfer): number {
  return b.blockNumber - a.blockNumber || b.logIndex - a.logIndex;
}
