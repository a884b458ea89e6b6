import { disagreeingFields, type BlockSighting } from '../dataset/block-agreement.ts';
import { TRANSFER_KEYS, type TransferRecord } from '../dataset/types.ts';
import { checkAddress, checkIndex, show, TRANSFER_FIELD_CHECKS } from '../dataset/validate.ts';
import { BadResponseError, describeContext } from './errors.ts';

/** Token metadata as a page reports it; unknown values are null. */
export interface TokenMetadata {
  contractAddress: string;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
}

/** One validated page of `getTokenTransfers`. */
export interface TransfersPage {
  token: TokenMetadata;
  /** Rows in this page (equals `transfers.length`). */
  count: number;
  /** The key of the next page; `undefined` on the last page. */
  nextPageKey: string | undefined;
  /** Newest first, as served; each with `contractAddress` = the queried contract. */
  transfers: TransferRecord[];
  /** What was tolerated but is worth a log line (e.g. unreadable decimals). */
  warnings: string[];
  /**
   * Every row was found in the logsBloom of its block's verified header before the page was answered (the node
   * source checks so, as it needs each block's header for its time): the pipeline counts them checked and does not
   * check them again.
   */
  bloomProven?: boolean;
  /**
   * Blocks of the page whose headers the source fetched (the node source) and holds for `headersByHash`: it looked
   * for them in the warehouse before fetching them (or could not read it), so the pipeline does not look them up
   * again. One stored meanwhile by another run is stored once all the same.
   */
  headersFetched?: ReadonlySet<string>;
}

export interface TransfersPageQuery {
  contract: string;
  fromBlock: number;
  toBlock: number;
}

type RowCheck = (value: unknown) => string | undefined;

/** The checks of a dataset row, but `contractAddress`: the API gives it once, for the whole page. */
const ROW_FIELDS = TRANSFER_FIELD_CHECKS.filter(([key]) => key !== 'contractAddress') as readonly (readonly [Exclude<keyof TransferRecord, 'contractAddress'>, RowCheck])[];

/**
 * Validates a `getTokenTransfers` body field by field against the query it answers, collecting every
 * problem, and throws one `BadResponseError` listing them all (each naming contract, block and field).
 * Tolerates `contractSymbols`, `nextPageKey` null or `""`, decimals as a number or unreadable text (null,
 * with a warning), unknown extra keys, and a row served twice in a row with the same fields (kept once, with
 * a warning); the same transfer twice with other fields, or apart, is a problem.
 *
 * @example
 * parseTransfersPage(body, { contract: '0xa0b8…', fromBlock: 17000000, toBlock: 17000100 })
 * // → { token: { name: 'USD Coin', symbol: 'USDC', decimals: 6, … }, count: 2, nextPageKey: undefined, transfers: […], warnings: [] }
 * // or throws: contract 0xa0b8…, block 17000000, tokenTransfers[3].value: expected decimal integer text from 0 to 2^256-1, got "-5"
 */
export function parseTransfersPage(body: unknown, query: TransfersPageQuery): TransfersPage {
  const contract = query.contract.toLowerCase();
  const range = describeContext({ contract, fromBlock: query.fromBlock, toBlock: query.toBlock });
  const problems: string[] = [];
  const warnings: string[] = [];
  const fail = (where: string, field: string, message: string) => problems.push(`${where}, ${field}: ${message}`);
  const summary = `getTokenTransfers answered a malformed page for ${range}`;

  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadResponseError(summary, [`${range}, body: expected a JSON object, got ${show(body)}`]);
  }
  const page = body as Record<string, unknown>;

  const addressProblem = checkAddress(page.contractAddress);
  if (addressProblem) fail(range, 'contractAddress', addressProblem);
  else if (page.contractAddress !== contract) fail(range, 'contractAddress', `expected the queried contract ${contract}, got ${show(page.contractAddress)}`);

  const token: TokenMetadata = {
    contractAddress: contract,
    name: readText(page, ['contractName'], range, fail),
    symbol: readText(page, ['contractSymbol', 'contractSymbols'], range, fail),
    decimals: readDecimals(page.contractDecimals, range, warnings),
  };

  let nextPageKey: string | undefined;
  if (typeof page.nextPageKey === 'string') nextPageKey = page.nextPageKey === '' ? undefined : page.nextPageKey;
  else if (page.nextPageKey !== undefined && page.nextPageKey !== null) {
    fail(range, 'nextPageKey', `expected an opaque text, null or nothing, got ${show(page.nextPageKey)}`);
  }

  const transfers: TransferRecord[] = [];
  const rows = page.tokenTransfers;
  if (!Array.isArray(rows)) {
    fail(range, 'tokenTransfers', `expected an array, got ${show(rows)}`);
  } else {
    const countProblem = checkIndex(page.count);
    const where = () => `${range}${pageBlocks(rows)}`;
    if (countProblem) fail(where(), 'count', countProblem);
    else if (page.count !== rows.length) fail(where(), 'count', `expected the number of rows in tokenTransfers (${rows.length}), got ${page.count}`);
    // a literal, not a spread of the caller's query (which has a pageKey on every page but a chunk's first): one
    // shape for every page, so the optimized checkRows is not thrown away when a page's query has the other
    checkRows(rows, { contract, fromBlock: query.fromBlock, toBlock: query.toBlock }, range, problems, warnings, transfers);
  }

  if (problems.length) throw new BadResponseError(summary, problems);
  return { token, count: transfers.length, nextPageKey, transfers, warnings };
}

/** ` (this page: blocks 7–9)` from the rows' readable block numbers, or `''`. */
function pageBlocks(rows: unknown[]): string {
  const numbers = rows
    .map((r) => (r !== null && typeof r === 'object' ? (r as Record<string, unknown>).blockNumber : undefined))
    .filter((n): n is number => checkIndex(n) === undefined);
  if (!numbers.length) return '';
  const [low, high] = [Math.min(...numbers), Math.max(...numbers)];
  return ` (this page: ${low === high ? `block ${low}` : `blocks ${low}–${high}`})`;
}

function checkRows(rows: unknown[], query: TransfersPageQuery, range: string, problems: string[], warnings: string[], out: TransferRecord[]): void {
  // 1M rows a minute go through here: messages are built only for problems, and per-row bookkeeping
  // allocates nothing for a row like the others (a repeated hash, or a new block, costs one entry)
  const byHash = new Map<string, number | number[]>();
  const blocks = new Map<number, BlockSighting & { index: number }>();
  let block: (BlockSighting & { index: number }) | undefined;
  let blockOf = -1;
  let before: TransferRecord | undefined;
  let beforeIndex = -1;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      problems.push(`${range}, tokenTransfers[${i}]: expected an object, got ${show(row)}`);
      continue;
    }
    const r = row as Record<string, unknown>;
    let ok = true;
    for (let f = 0; f < ROW_FIELDS.length; f++) {
      const [field, check] = ROW_FIELDS[f]!;
      const value = r[field];
      // a block's hash and time, checked on its first row, are the same text on the next ones: the row takes the
      // first row's strings, so its own copies die young instead of living on with the row until its header comes
      if (block !== undefined && blockOf === r.blockNumber) {
        if (field === 'blockHash' && value === block.hash) {
          r.blockHash = block.hash;
          continue;
        }
        if (field === 'blockTimestamp' && value === block.timestamp) {
          r.blockTimestamp = block.timestamp;
          continue;
        }
      }
      const problem = check(value);
      if (problem) {
        problems.push(`${whereIs(r, query, range)}, tokenTransfers[${i}].${field}: ${problem}`);
        ok = false;
      }
    }
    if (!ok) continue;
    const transfer = asTransfer(r, query.contract);
    const { blockNumber, logIndex, transactionHash } = transfer;
    if (before && sameTransfer(before, transfer)) {
      // served twice in a row, identical: harmless once merged, so kept once
      warnings.push(
        `${whereIs(r, query, range)}, tokenTransfers[${i}]: the same transfer (transactionHash ${transactionHash}, logIndex ${logIndex}) as tokenTransfers[${beforeIndex}], served twice; kept once`,
      );
      continue;
    }
    if (blockNumber < query.fromBlock || blockNumber > query.toBlock) {
      problems.push(
        `${whereIs(r, query, range)}, tokenTransfers[${i}].blockNumber: expected a block from ${query.fromBlock} to ${query.toBlock} (the queried range), got ${blockNumber}`,
      );
    }
    if (before && !(blockNumber < before.blockNumber || (blockNumber === before.blockNumber && logIndex < before.logIndex))) {
      problems.push(
        `${whereIs(r, query, range)}, tokenTransfers[${i}]: expected newest first (blockNumber, then logIndex, descending), got block ${blockNumber} log ${logIndex} after block ${before.blockNumber} log ${before.logIndex} at tokenTransfers[${beforeIndex}]`,
      );
    }
    before = transfer;
    beforeIndex = i;
    const first = firstWithKey(byHash, rows, transactionHash, logIndex, i);
    if (first !== undefined) {
      problems.push(`${whereIs(r, query, range)}, tokenTransfers[${i}]: the same transfer (transactionHash ${transactionHash}, logIndex ${logIndex}) as tokenTransfers[${first}]`);
    }
    if (blockNumber !== blockOf) {
      blockOf = blockNumber;
      block = blocks.get(blockNumber);
      if (!block) {
        block = { hash: transfer.blockHash, number: blockNumber, timestamp: transfer.blockTimestamp, index: i };
        blocks.set(blockNumber, block);
      }
    }
    for (const field of disagreeingFields(block!, transfer)) {
      const [name, got] = field === 'hash' ? ['blockHash', transfer.blockHash] : ['blockTimestamp', transfer.blockTimestamp];
      problems.push(`${whereIs(r, query, range)}, tokenTransfers[${i}].${name}: expected ${block![field]} as in tokenTransfers[${block!.index}] of the same block, got ${got}`);
    }
    out.push(transfer);
  }
}

/**
 * A validated row as a transfer. A row with exactly the fields of a transfer (the API's usual answer) becomes
 * one itself, with the contract added: a copy of every row would be a million more objects per million rows
 * for the garbage collector. A row with extra keys is copied without them.
 */
function asTransfer(r: Record<string, unknown>, contract: string): TransferRecord {
  let keys = 0;
  for (const _ in r) keys++;
  if (keys === ROW_FIELDS.length) {
    r.contractAddress = contract;
    return r as unknown as TransferRecord;
  }
  return {
    contractAddress: contract,
    fromAddress: r.fromAddress as string,
    toAddress: r.toAddress as string,
    value: r.value as string,
    blockHash: r.blockHash as string,
    blockNumber: r.blockNumber as number,
    blockTimestamp: r.blockTimestamp as string,
    transactionHash: r.transactionHash as string,
    transactionIndex: r.transactionIndex as number,
    logIndex: r.logIndex as number,
  };
}

/** `contract 0x…, block N` of a row whose block number is readable, else the queried range. */
function whereIs(r: Record<string, unknown>, query: TransfersPageQuery, range: string): string {
  return checkIndex(r.blockNumber) === undefined ? `contract ${query.contract}, block ${r.blockNumber as number}` : range;
}

/**
 * The index of an earlier row with the same (transactionHash, logIndex), if any; records row `i` either
 * way. Rows are indexed by hash alone, and only a hash seen before is compared by log index.
 */
function firstWithKey(byHash: Map<string, number | number[]>, rows: unknown[], hash: string, logIndex: number, i: number): number | undefined {
  const earlier = byHash.get(hash);
  if (earlier === undefined) {
    byHash.set(hash, i);
    return undefined;
  }
  const list = typeof earlier === 'number' ? [earlier] : earlier;
  const first = list.find((j) => (rows[j] as { logIndex: number }).logIndex === logIndex);
  if (first === undefined) {
    list.push(i);
    if (typeof earlier === 'number') byHash.set(hash, list);
  }
  return first;
}

/**
 * Whether two rows are the same transfer with the same fields: a repeat that merges to nothing.
 *
 * @example sameTransfer(row, { ...row }) // → true; sameTransfer(row, { ...row, value: '1' }) // → false (unless it was '1')
 */
export function sameTransfer(a: TransferRecord, b: TransferRecord): boolean {
  return TRANSFER_KEYS.every((key) => a[key] === b[key]);
}

/** The first of `keys` present; `""`, null or absent are null; any other non-text is a problem. */
function readText(page: Record<string, unknown>, keys: readonly string[], range: string, fail: (where: string, field: string, message: string) => void): string | null {
  const key = keys.find((k) => page[k] !== undefined) ?? keys[0]!;
  const value = page[key];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'string') return value;
  fail(range, key, `expected text, got ${show(value)}`);
  return null;
}

/** `"6"` or `6` → 6; `""`, null or absent → null; anything else → null with a warning. */
function readDecimals(value: unknown, range: string, warnings: string[]): number | null {
  if (value === undefined || value === null || value === '') return null;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^[0-9]{1,3}$/.test(value) ? Number(value) : NaN;
  if (Number.isInteger(n) && n >= 0 && n <= 255) return n;
  warnings.push(`${range}, contractDecimals: expected an integer from 0 to 255, got ${show(value)}; stored as unknown (NULL)`);
  return null;
}
