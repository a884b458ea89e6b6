import type { HeaderJson } from '../eth/header-fields.ts';
import type { Dataset, TokenRecord, TransferRecord } from '../dataset/types.ts';
import { type ChainLog, chainLogOf, type StoredLog } from './chain-log.ts';
import type { ForeignLog } from './foreign-logs.ts';

/**
 * The chain the reference server serves, indexed for its queries: transfers per contract newest first,
 * every log in chain order, headers by hash (orphaned ones too, as real nodes keep them) and canonical
 * headers by number. Records are shared with the dataset it was built from, never copied: treat both as
 * read-only. Headers are served as they were given, whatever keys they hold.
 */
export interface ChainStore {
  /** Highest canonical block number, or -1 for an empty chain. */
  head(): number;
  /** Lowest canonical block number, or -1 for an empty chain. */
  lowest(): number;
  headerByHash(hash: string): HeaderJson | undefined;
  isCanonical(hash: string): boolean;
  headerByNumber(number: number): HeaderJson | undefined;
  /** The canonical header of the highest block held at or below `number`. */
  headerAtOrBelow(number: number): HeaderJson | undefined;
  /**
   * The logs of blocks `from` to `to` (inclusive) in chain order, block then log index: the transfers' and
   * the foreign logs' (placed after the ERC-20 logs of their block). `addresses` keeps only those emitters.
   */
  logs(from: number, to: number, addresses?: ReadonlySet<string>): ChainLog[];
  /** `logs`, a transfer's log as its row: what an `eth_getLogs` answer writes from (logs-answer.ts). */
  storedLogs(from: number, to: number, addresses?: ReadonlySet<string>): StoredLog[];
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

/**
 * A store of `initial`, with `foreign` logs (ones that are not transfer rows: see foreign-logs.ts) kept by
 * block number, so that they follow the chain through reorgs. Their bits are in the blooms of the headers
 * that hold them when the dataset and the logs come from the same synthetic options (synthetic.ts), and a
 * reorg keeps them there (reorg.ts); the store itself never changes a header.
 */
export function createChainStore(initial: Dataset, foreign: readonly ForeignLog[] = []): ChainStore {
  let byContract = new Map<string, TransferRecord[]>();
  let canonical = new Map<string, HeaderJson>();
  let byNumber = new Map<number, HeaderJson>();
  let numbers: number[] = [];
  let tokens: TokenRecord[] = [];
  let tokenByContract = new Map<string, TokenRecord>();
  let headers: HeaderJson[] = [];
  let headNumber = -1;
  let transferCount = 0;
  /** Every transfer, by (blockNumber, logIndex). */
  let ordered: TransferRecord[] = [];
  /** The foreign logs of canonical blocks, placed, by (blockNumber, logIndex). */
  let placed: ChainLog[] = [];
  const orphans = new Map<string, HeaderJson>();

  function load(dataset: Dataset) {
    headers = [...dataset.headers].sort((a, b) => Number(BigInt(a.number!) - BigInt(b.number!)));
    canonical = new Map(headers.map((h) => [h.hash, h]));
    numbers = headers.map((h) => Number(BigInt(h.number!)));
    byNumber = new Map(headers.map((h, i) => [numbers[i]!, h]));
    headNumber = headers.length ? numbers[numbers.length - 1]! : -1;
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
    ordered = [...dataset.transfers].sort(chainOrder);
    placed = placeForeignLogs(foreign, ordered, byNumber);
  }
  load(initial);

  function storedLogs(from: number, to: number, addresses?: ReadonlySet<string>): StoredLog[] {
    const out: StoredLog[] = [];
    const keep = (address: string) => addresses === undefined || addresses.has(address);
    let f = firstAbove(placed, from - 1, (l) => l.blockNumber);
    for (let i = firstAbove(ordered, from - 1, (t) => t.blockNumber); i < ordered.length && ordered[i]!.blockNumber <= to; i++) {
      const t = ordered[i]!;
      // foreign logs of earlier blocks, and of this block (they stand after its ERC-20 logs)
      for (; f < placed.length && placed[f]!.blockNumber < t.blockNumber; f++) if (keep(placed[f]!.address)) out.push(placed[f]!);
      if (keep(t.contractAddress)) out.push(t);
    }
    for (; f < placed.length && placed[f]!.blockNumber <= to; f++) if (keep(placed[f]!.address)) out.push(placed[f]!);
    return out;
  }

  return {
    head: () => headNumber,
    lowest: () => (numbers.length ? numbers[0]! : -1),
    headerByHash: (hash) => canonical.get(hash) ?? orphans.get(hash),
    isCanonical: (hash) => canonical.has(hash),
    headerByNumber: (n) => byNumber.get(n),
    headerAtOrBelow(n) {
      const i = firstAbove(numbers, n, (x) => x) - 1;
      return i >= 0 ? headers[i] : undefined;
    },
    logs: (from, to, addresses) => storedLogs(from, to, addresses).map(chainLogOf),
    storedLogs,
    token: (contract) => tokenByContract.get(contract),
    transfersOf: (contract) => byContract.get(contract) ?? [],
    contracts: () => [...byContract].map(([contractAddress, list]) => ({ contractAddress, transfers: list.length })),
    truth() {
      return { headers: [...headers], transfers: [...ordered], tokens: [...tokens] };
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
  // a million transfers at start: their description is made only for a field that fails
  for (const key of ['contractAddress', 'fromAddress', 'toAddress', 'value', 'blockHash', 'blockTimestamp', 'transactionHash'] as const) {
    if (!isJsonSafe(t[key])) throw notJsonSafe(`transfer ${t.transactionHash}/${t.logIndex}`, key);
  }
}

/** A foreign log's text fields, as a transfer's: `LogsAnswer` writes them into JSON unescaped. */
function assertJsonSafeLog(log: ForeignLog, blockHash: string): void {
  const fields: [string, unknown][] = [
    ['address', log.address],
    ['data', log.data],
    ['transactionHash', log.transactionHash],
    ['blockHash', blockHash],
    ...log.topics.map((t, i): [string, unknown] => [`topics[${i}]`, t]),
  ];
  for (const [field, text] of fields) if (!isJsonSafe(text)) throw notJsonSafe(`foreign log ${log.transactionHash} of block ${log.blockNumber}`, field);
}

function isJsonSafe(text: unknown): boolean {
  return typeof text === 'string' && JSON_SAFE.test(text);
}

function notJsonSafe(what: string, field: string): TypeError {
  return new TypeError(`${what}: field ${field} is not hex, decimal or ISO text`);
}

function newestFirst(a: TransferRecord, b: TransferRecord): number {
  return b.blockNumber - a.blockNumber || b.logIndex - a.logIndex;
}

function chainOrder(a: TransferRecord, b: TransferRecord): number {
  return a.blockNumber - b.blockNumber || a.logIndex - b.logIndex;
}

/** The index of the first item whose key is above `n`, in items sorted by key (binary search). */
function firstAbove<T>(items: readonly T[], n: number, key: (item: T) => number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(items[mid]!) > n) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Gives each foreign log of a canonical block its place: log indexes and transaction indexes above the
 * highest of the block's transfers (so none collides), in the order the logs come, with the block's hash
 * and time. Foreign logs of blocks the chain does not hold are left out.
 */
function placeForeignLogs(foreign: readonly ForeignLog[], ordered: readonly TransferRecord[], byNumber: ReadonlyMap<number, HeaderJson>): ChainLog[] {
  if (!foreign.length) return [];
  const highest = new Map<number, { logIndex: number; transactionIndex: number }>();
  for (const t of ordered) {
    const h = highest.get(t.blockNumber) ?? { logIndex: -1, transactionIndex: -1 };
    h.logIndex = Math.max(h.logIndex, t.logIndex);
    h.transactionIndex = Math.max(h.transactionIndex, t.transactionIndex);
    highest.set(t.blockNumber, h);
  }
  const placed: ChainLog[] = [];
  for (const log of foreign) {
    const header = byNumber.get(log.blockNumber);
    if (!header) continue;
    const h = highest.get(log.blockNumber) ?? { logIndex: -1, transactionIndex: -1 };
    h.logIndex++;
    h.transactionIndex++;
    highest.set(log.blockNumber, h);
    assertJsonSafeLog(log, header.hash);
    placed.push({
      address: log.address,
      topics: log.topics,
      data: log.data,
      blockNumber: log.blockNumber,
      blockHash: header.hash,
      blockTimestamp: Number(BigInt(header.timestamp!)),
      transactionHash: log.transactionHash,
      transactionIndex: h.transactionIndex,
      logIndex: h.logIndex,
    });
  }
  return placed.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}
