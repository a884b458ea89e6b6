/**
 * A chain reorganisation of a dataset: the newest blocks are replaced by a competing fork, the way a node
 * sees it after a reorg. Pure: the input dataset is left as it is.
 */
import type { Dataset, TransferRecord } from '../dataset/types.ts';
import type { HeaderJson } from '../eth/header-fields.ts';
import { chainHeaderHash } from '../eth/chain-rules.ts';
import { fromQuantity } from '../eth/hex.ts';
import { blockTransfer, type TransferParts } from './block-transfer.ts';
import { createRng, deriveSeed, type Rng } from './rng.ts';
import { bloomHex, createBloomWriter, parseBloom } from './true-bloom.ts';

export interface ReorgResult {
  /** The dataset as the new fork has it. */
  dataset: Dataset;
  /** The replaced headers of the old fork, lowest number first. */
  orphaned: HeaderJson[];
}

/** Share of the affected transactions dropped, and share moved to another replaced block. */
const DROP_SHARE = 0.15;
const MOVE_SHARE = 0.15;
/** New transfers, as a share of the transfers in the replaced blocks (at least one). */
const NEW_SHARE = 0.15;

/**
 * Replaces the `depth` highest-numbered headers by another fork: same numbers and timestamps, different
 * contents and hashes, parent links relinked. Their transfers are partly dropped, partly moved to another
 * replaced block (whole transactions, with fresh non-colliding indexes), the rest kept under the new block
 * hash; a few new transfers appear. Tokens are unchanged. Untouched transfers keep their order and the
 * replaced blocks' transfers follow by (blockNumber, logIndex), so a dataset sorted that way stays sorted.
 * Deterministic for (dataset, depth, seed). Records it leaves as they are (untouched headers, transfers and
 * tokens, and the orphaned headers) are shared with the input, not copied: treat datasets as immutable.
 *
 * A new block's `logsBloom` is the old block's with the bits of the new block's transfers added: it keeps
 * what the old bloom held besides the transfers (the foreign logs the server places by block number, which
 * stay in the block through the reorg; a real block's other logs), and bits of transfers that left the block
 * stay too, as a bloom may hold more than its logs. So every log the server serves in a new block is in its
 * bloom when every log of the old block was. A header without a 256-byte bloom keeps its field as it was.
 * The fork is made in that order: headers' fields first, then the transfers, then the blooms, then the
 * hashes, each parent before its child, and the transfers get their block's new hash.
 *
 * @example
 * const { dataset: after, orphaned } = reorgDataset(before, 3, 7); // chain 1's headers (a fourth argument names another chain)
 * orphaned.map((h) => h.hash); // the three newest hashes of `before`, now gone from `after`
 */
export function reorgDataset(dataset: Dataset, depth: number, seed: number, chainId = 1): ReorgResult {
  const count = dataset.headers.length;
  if (!Number.isSafeInteger(depth) || depth < 1 || depth > count) {
    throw new RangeError(`reorg depth must be an integer from 1 to ${count} (the number of headers), got ${depth}`);
  }
  const rng = createRng(deriveSeed(seed, 'reorg'));
  const { replaced, headers, orphaned, hashOf } = replaceHeaders(rng, dataset.headers, depth);
  const { untouched, contents } = rewriteTransfers(rng, dataset, replaced);
  sealFork(contents, hashOf, chainId);
  const transfers = untouched;
  for (const content of contents) for (const t of content.transfers) transfers.push(t);
  return { dataset: { headers, transfers, tokens: [...dataset.tokens] }, orphaned };
}

// --------------------------------------------------------------------------------------------- headers

/** One replaced block: where it was, and what it looks like on the new fork. */
interface ReplacedBlock {
  number: number;
  oldHash: string;
  /** Its header on the new fork: every field final but `logsBloom`, `parentHash` and `hash` until `sealFork`. */
  header: HeaderJson;
  /** Empty until `sealFork` hashes the header; the transfers placed in the block get it then. */
  hash: string;
  /** ISO 8601 UTC with milliseconds, as transfers carry it. */
  timestamp: string;
}

function quantityField(header: HeaderJson, key: 'number' | 'timestamp'): number {
  const text = header[key];
  if (text === null) throw new TypeError(`header ${header.hash}: ${key} is null`);
  return Number(fromQuantity(text));
}

/**
 * Draws the new fork's headers (all but bloom, parent hash and hash: `sealFork` sets those), in place of the
 * `depth` highest-numbered ones; `hashOf` is every input header's hash by number.
 */
function replaceHeaders(
  rng: Rng,
  input: readonly HeaderJson[],
  depth: number,
): { replaced: ReplacedBlock[]; headers: HeaderJson[]; orphaned: HeaderJson[]; hashOf: Map<number, string> } {
  const numbers = input.map((h) => quantityField(h, 'number'));
  const byNumber = input.map((_, i) => i).sort((a, b) => numbers[a]! - numbers[b]! || a - b);
  const positions = byNumber.slice(byNumber.length - depth);
  const hashOf = new Map<number, string>();
  input.forEach((h, i) => {
    hashOf.set(numbers[i]!, h.hash);
  });

  const headers = [...input];
  const replaced: ReplacedBlock[] = [];
  const orphaned: HeaderJson[] = [];
  for (const position of positions) {
    const old = input[position]!;
    const number = numbers[position]!;
    const fresh: HeaderJson = {
      ...old,
      extraData: rng.hex(rng.int(4, 16)),
      stateRoot: rng.hex(32),
      transactionsRoot: rng.hex(32),
      receiptsRoot: rng.hex(32),
      mixHash: rng.hex(32),
    };
    headers[position] = fresh;
    orphaned.push(old);
    const timestamp = new Date(quantityField(old, 'timestamp') * 1000).toISOString();
    replaced.push({ number, oldHash: old.hash, header: fresh, hash: '', timestamp });
  }
  return { replaced, headers, orphaned, hashOf };
}

/**
 * Completes the new fork, lowest block first: each new header's bloom (the old one, plus the bits of the
 * transfers the block now holds), then its parent hash (the new hash of the block below, when it was
 * replaced too; the old parent hash otherwise) and its hash, which its transfers then carry. `hashOf`, the
 * hashes by number, starts as the input's and ends as the new fork's. Each header is hashed by chain `chainId`'s rule.
 */
function sealFork(contents: readonly BlockContent[], hashOf: Map<number, string>, chainId: number): void {
  const writer = createBloomWriter();
  for (const { block, transfers } of contents) {
    const { header } = block;
    const bloom = parseBloom(header.logsBloom);
    if (bloom !== undefined) {
      for (const t of transfers) writer.addTransfer(bloom, t);
      header.logsBloom = bloomHex(bloom);
    }
    header.parentHash = hashOf.get(block.number - 1) ?? header.parentHash;
    header.hash = chainHeaderHash(chainId, header);
    block.hash = header.hash;
    hashOf.set(block.number, header.hash);
    for (const t of transfers) t.blockHash = header.hash;
  }
}

// ------------------------------------------------------------------------------------------- transfers

/** The transfers a replaced block ends up with, and its highest indexes so far. */
interface BlockContent {
  block: ReplacedBlock;
  transfers: TransferRecord[];
  maxLogIndex: number;
  maxTransactionIndex: number;
}

/** One transaction's transfers in a replaced block of the old fork. */
interface OldTransaction {
  source: number;
  transfers: TransferRecord[];
}

/**
 * The transfers outside the replaced blocks, as they were, and those of each replaced block on the new fork,
 * by log index, with an empty block hash until `sealFork` sets it.
 */
function rewriteTransfers(rng: Rng, dataset: Dataset, replaced: readonly ReplacedBlock[]): { untouched: TransferRecord[]; contents: BlockContent[] } {
  const blockOfHash = new Map(replaced.map((b, i) => [b.oldHash, i]));
  const untouched: TransferRecord[] = [];
  const affected: TransferRecord[][] = replaced.map(() => []);
  for (const t of dataset.transfers) {
    const i = blockOfHash.get(t.blockHash);
    if (i === undefined) untouched.push(t);
    else affected[i]!.push(t);
  }

  const contents: BlockContent[] = replaced.map((block) => ({
    block,
    transfers: [],
    maxLogIndex: -1,
    maxTransactionIndex: -1,
  }));
  const transactions = groupTransactions(affected);
  const affectedCount = affected.reduce((sum, list) => sum + list.length, 0);

  // Decide the fate of each transaction: shuffle, then the first ones are dropped, the next ones moved.
  const order = shuffled(rng, transactions.length);
  const dropCount = transactions.length >= 2 ? Math.max(1, Math.round(transactions.length * DROP_SHARE)) : 0;
  const canMove = replaced.length >= 2 && transactions.length - dropCount >= 2;
  const moveCount = canMove ? Math.max(1, Math.round(transactions.length * MOVE_SHARE)) : 0;
  const fate = new Uint8Array(transactions.length); // 0 keep, 1 drop, 2 move
  order.forEach((tx, rank) => {
    fate[tx] = rank < dropCount ? 1 : rank < dropCount + moveCount ? 2 : 0;
  });

  transactions.forEach((tx, i) => {
    if (fate[i] !== 0) return;
    const content = contents[tx.source]!;
    for (const t of tx.transfers) place(content, { ...t, blockHash: content.block.hash });
  });
  transactions.forEach((tx, i) => {
    if (fate[i] !== 2) return;
    let target = rng.int(0, replaced.length - 2);
    if (target >= tx.source) target++;
    appendTransaction(rng, contents[target]!, tx.transfers[0]!.transactionHash, tx.transfers);
  });
  addNewTransfers(rng, dataset, contents, Math.max(1, Math.round(affectedCount * NEW_SHARE)));

  for (const content of contents) content.transfers.sort((a, b) => a.logIndex - b.logIndex);
  return { untouched, contents };
}

/** The transactions of each replaced block, in order of first log. */
function groupTransactions(affected: readonly TransferRecord[][]): OldTransaction[] {
  const transactions: OldTransaction[] = [];
  affected.forEach((list, source) => {
    const byHash = new Map<string, OldTransaction>();
    for (const t of [...list].sort((a, b) => a.logIndex - b.logIndex)) {
      let tx = byHash.get(t.transactionHash);
      if (!tx) {
        tx = { source, transfers: [] };
        byHash.set(t.transactionHash, tx);
        transactions.push(tx);
      }
      tx.transfers.push(t);
    }
  });
  return transactions;
}

function shuffled(rng: Rng, n: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

function place(content: BlockContent, t: TransferRecord): void {
  content.transfers.push(t);
  content.maxLogIndex = Math.max(content.maxLogIndex, t.logIndex);
  content.maxTransactionIndex = Math.max(content.maxTransactionIndex, t.transactionIndex);
}

/**
 * Puts one transaction's transfers at the end of a replaced block: a transaction index and log indexes
 * above every one already there (with small gaps, for other transactions and logs).
 */
function appendTransaction(rng: Rng, content: BlockContent, transactionHash: string, transfers: readonly TransferParts[]): void {
  const transactionIndex = content.maxTransactionIndex + 1 + rng.int(0, 2);
  let logIndex = content.maxLogIndex + 1 + rng.int(0, 2);
  for (const t of transfers) {
    place(content, blockTransfer(t, content.block, { transactionHash, transactionIndex, logIndex }));
    logIndex += 1 + (rng.chance(0.2) ? 1 : 0);
  }
}

/** `count` new transfers, in new transactions of one to three transfers, on contracts the dataset has. */
function addNewTransfers(rng: Rng, dataset: Dataset, contents: readonly BlockContent[], count: number): void {
  const { transfers, tokens } = dataset;
  const contracts = transfers.length > 0 ? null : tokens.map((t) => t.contractAddress);
  if (contracts !== null && contracts.length === 0) return; // no contract to transfer on
  for (let made = 0; made < count; ) {
    const size = Math.min(count - made, rng.int(1, 3));
    const batch = Array.from({ length: size }, () => {
      const sample = transfers.length > 0 ? transfers[rng.int(0, transfers.length - 1)]! : null;
      const other = transfers.length > 0 ? transfers[rng.int(0, transfers.length - 1)]! : null;
      return {
        contractAddress: sample ? sample.contractAddress : rng.pick(contracts!),
        fromAddress: sample ? sample.toAddress : rng.hex(20),
        toAddress: other && rng.chance(0.7) ? other.toAddress : rng.hex(20),
        value: (BigInt(rng.int(1, 999_999)) * 10n ** BigInt(rng.int(0, 18))).toString(),
      };
    });
    appendTransaction(rng, rng.pick(contents), rng.hex(32), batch);
    made += size;
  }
}
