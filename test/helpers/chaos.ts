import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { TRANSFER_KEYS, type Dataset, type TransferRecord } from '../../src/dataset/types.ts';
import type { DevnetStats } from '../../src/devnet/stats.ts';
import { REPO_DIR } from './cli.ts';

/** Where the chaos tests leave their figures (one JSON file per test file). */
export const FIGURES_DIR = join(REPO_DIR, '.data', 'figures');

/**
 * Writes `figures` as pretty JSON to `.data/figures/NAME.json`; resolves to the path.
 *
 * @example await writeFigures('fault-matrix', { cases }) // → '/…/.data/figures/fault-matrix.json'
 */
export async function writeFigures(name: string, figures: unknown): Promise<string> {
  await mkdir(FIGURES_DIR, { recursive: true });
  const path = join(FIGURES_DIR, `${name}.json`);
  await writeFile(path, `${JSON.stringify(figures, null, 2)}\n`);
  return path;
}

/** The identity of a transfer: its primary key in token_transfers. */
export const transferKey = (t: { transactionHash: string; logIndex: number }): string => `${t.transactionHash}:${t.logIndex}`;

/** The token contracts that have transfers, sorted. */
export function contractsOf(dataset: Dataset): string[] {
  return [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort();
}

export interface TransferDiff {
  /** Rows in the warehouse. */
  rows: number;
  /** Rows the truth has. */
  expected: number;
  /** Keys the truth has and the warehouse lacks. */
  lost: number;
  /** Keys the warehouse has and the truth lacks. */
  extra: number;
  /** Warehouse rows beyond the first of their key (0 while the primary key holds). */
  duplicated: number;
  /** Keys in both whose fields differ. */
  changed: number;
  /** Up to five of the differences, readable, for the failure message. */
  examples: string[];
}

const FIELDS = TRANSFER_KEYS;
const fieldsText = (t: TransferRecord) => FIELDS.map((f) => String(t[f])).join('|');

/**
 * Compares warehouse rows with the truth by key and by every field.
 *
 * @example diffTransfers(await warehouseTransfers(w), datasetTransfers(truth)) // → { rows: 20000, expected: 20000, lost: 0, …, examples: [] }
 */
export function diffTransfers(actual: readonly TransferRecord[], expected: readonly TransferRecord[]): TransferDiff {
  const want = new Map(expected.map((t) => [transferKey(t), t]));
  const seen = new Set<string>();
  const examples: string[] = [];
  const note = (text: string) => void (examples.length < 5 && examples.push(text));
  let duplicated = 0;
  let extra = 0;
  let changed = 0;
  for (const t of actual) {
    const key = transferKey(t);
    if (seen.has(key)) {
      duplicated++;
      note(`twice: ${key}`);
      continue;
    }
    seen.add(key);
    const truth = want.get(key);
    if (!truth) {
      extra++;
      note(`not on the chain: ${key} (block ${t.blockNumber})`);
    } else if (fieldsText(truth) !== fieldsText(t)) {
      changed++;
      note(`differs: ${key}: ${fieldsText(t)} ≠ ${fieldsText(truth)}`);
    }
  }
  let lost = 0;
  for (const [key, t] of want) {
    if (seen.has(key)) continue;
    lost++;
    note(`missing: ${key} (block ${t.blockNumber})`);
  }
  return { rows: actual.length, expected: expected.length, lost, extra, duplicated, changed, examples };
}

/** An exact match of `diffTransfers`: everything there, nothing else, nothing twice, nothing different. */
export const EXACT = { lost: 0, extra: 0, duplicated: 0, changed: 0, examples: [] } as const;

/**
 * The canonical transfers a reference server serves (`GET /__truth/transfers.jsonl`), in the order of
 * `datasetTransfers`; `fromBlock` keeps only those at or above it.
 *
 * @example const expected = await truthTransfers(devnet.origin, 3_001_600); // blocks 3,001,600 and up
 */
export async function truthTransfers(origin: string, fromBlock = 0): Promise<TransferRecord[]> {
  const text = await (await fetch(`${origin}/__truth/transfers.jsonl`)).text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TransferRecord)
    .filter((t) => t.blockNumber >= fromBlock)
    .sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}

/** What the reference server injected, by kind, read from its `/__stats` errors. */
export interface InjectedFaults {
  /** 500/502/503 on getTokenTransfers, and JSON-RPC -32603 (the same failure on a POST). */
  failures: number;
  /** Sockets destroyed mid-response. */
  resets: number;
  /** 200 bodies cut short. */
  truncated: number;
  /** 429 on getTokenTransfers, and JSON-RPC -32097 (also HTTP 429). */
  rateLimited: number;
  /** Header lookups answered -32000 "not found" (inside 200 batches). */
  headerLags: number;
}

/**
 * Sorts the server's error counters into the faults it injected.
 *
 * @example injectedFaults({ errors: { '503': 2, '-32603': 1, reset: 3 }, … }) // → { failures: 3, resets: 3, … }
 */
export function injectedFaults(stats: DevnetStats): InjectedFaults {
  const e = (key: string) => stats.errors[key] ?? 0;
  return {
    failures: e('500') + e('502') + e('503') + e('-32603'),
    resets: e('reset'),
    truncated: e('truncated'),
    rateLimited: e('429') + e('-32097'),
    headerLags: e('-32000'),
  };
}

/** The server error keys that `injectedFaults` accounts for; any other key means something else went wrong. */
export const FAULT_ERROR_KEYS: ReadonlySet<string> = new Set(['500', '502', '503', '-32603', 'reset', 'truncated', '429', '-32097', '-32000']);

/** What another client of the same project id sent, and what the server answered it, by fault kind. */
export interface CompetitorCounts {
  requests: number;
  ok: number;
  /** HTTP 429 (JSON-RPC -32097). */
  rateLimited: number;
  /** HTTP 5xx (JSON-RPC -32603). */
  failures: number;
  /** The socket closed before the whole answer arrived. */
  resets: number;
  /** A 200 whose body is not JSON. */
  truncated: number;
  other: number;
}

/**
 * Another client of the same project id, sharing its rate limit: it POSTs `eth_chainId` at `rps` requests
 * per second, one at a time, ignoring Retry-After, until stopped, and sorts every answer into the fault
 * kinds of `InjectedFaults`, so the server's counters can be split between it and the client under test.
 *
 * @example const competitor = startCompetitor(devnet.base, 20); …; const counts = await competitor.stop();
 */
export function startCompetitor(base: string, rps: number): { stop(): Promise<CompetitorCounts> } {
  const counts: CompetitorCounts = { requests: 0, ok: 0, rateLimited: 0, failures: 0, resets: 0, truncated: 0, other: 0 };
  let stopped = false;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
  const loop = (async () => {
    for (let next = performance.now(); !stopped; ) {
      counts.requests++;
      try {
        const res = await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const text = await res.text();
        if (res.status === 429) counts.rateLimited++;
        else if (res.status >= 500) counts.failures++;
        else if (res.status !== 200) counts.other++;
        else {
          try {
            JSON.parse(text);
            counts.ok++;
          } catch {
            counts.truncated++;
          }
        }
      } catch {
        counts.resets++;
      }
      next += 1000 / rps;
      await sleep(Math.max(0, next - performance.now()));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return counts;
    },
  };
}

export interface ReorgAnswer {
  depth: number;
  forkBlock: number;
  head: number;
  orphanedHeaders: string[];
}

/**
 * `POST /__control/reorg {"depth": N}` on a reference server; fails on anything but 200.
 *
 * @example const { forkBlock, orphanedHeaders } = await triggerReorg(devnet.origin, 7); // the newest 7 blocks replaced
 */
export async function triggerReorg(origin: string, depth: number): Promise<ReorgAnswer> {
  const res = await fetch(`${origin}/__control/reorg`, { method: 'POST', body: JSON.stringify({ depth }) });
  const body = (await res.json()) as ReorgAnswer;
  if (res.status !== 200) throw new Error(`reorg of depth ${depth} answered HTTP ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/**
 * Polls `probe` every `everyMs` until it answers something other than undefined or false, and resolves
 * to that; rejects after `timeoutMs`, naming `what`.
 *
 * @example await waitFor(async () => (await committedPages()) >= 5, { what: 'five committed pages' });
 */
export async function waitFor<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, options: { what: string; timeoutMs?: number; everyMs?: number }): Promise<T> {
  const deadline = performance.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${options.what}`);
    await sleep(options.everyMs ?? 20);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A chunk's committed position, with its range's contract. */
export interface ChunkPosition {
  id: string;
  contract: string;
  fromBlock: number;
  toBlock: number;
  resumeToBlock: number | null;
  done: boolean;
  pages: number;
  rows: number;
}

/**
 * Every chunk of the open ranges, as committed (reconciliation deletes the chunks of a finished range).
 *
 * @example (await chunkPositions(warehouse.pool)).reduce((n, c) => n + c.pages, 0) // pages committed so far
 */
export async function chunkPositions(pool: pg.Pool): Promise<ChunkPosition[]> {
  const { rows } = await pool.query<{
    id: string;
    contract: string;
    from_block: string;
    to_block: string;
    resume_to_block: string | null;
    done: boolean;
    pages: number;
    rows: string;
  }>(
    `SELECT c.id, r.contract_address AS contract, c.from_block, c.to_block, c.resume_to_block, c.done, c.pages, c.rows
     FROM export_chunks c JOIN export_ranges r ON r.id = c.range_id ORDER BY c.id`,
  );
  return rows.map((c) => ({
    id: c.id,
    contract: c.contract,
    fromBlock: Number(c.from_block),
    toBlock: Number(c.to_block),
    resumeToBlock: c.resume_to_block === null ? null : Number(c.resume_to_block),
    done: c.done,
    pages: c.pages,
    rows: Number(c.rows),
  }));
}

/**
 * Where a committed position is ahead of its rows, as readable problems (empty when none): a done chunk
 * must hold every truth transfer of its contract in [fromBlock, toBlock]; an unfinished one every transfer
 * in (resumeToBlock, toBlock], and its row count must lie between the transfers of (resumeToBlock, toBlock]
 * and of [resumeToBlock, toBlock] (the lowest block may be partly read). A chunk with no position has no rows (it may
 * have counted pages that held none).
 *
 * @example expect(positionsAheadOfRows(await chunkPositions(pool), truth, await warehouseTransfers(w))).toEqual([]);
 */
export function positionsAheadOfRows(chunks: readonly ChunkPosition[], truth: Dataset, committed: readonly TransferRecord[]): string[] {
  const have = new Set(committed.map(transferKey));
  const problems: string[] = [];
  for (const c of chunks) {
    const mine = truth.transfers.filter((t) => t.contractAddress === c.contract && t.blockNumber >= c.fromBlock && t.blockNumber <= c.toBlock);
    const where = `chunk ${c.id} (${c.contract.slice(0, 10)} ${c.fromBlock}–${c.toBlock}, resume ${c.resumeToBlock}, done ${c.done})`;
    if (c.done) {
      const missing = mine.filter((t) => !have.has(transferKey(t))).length;
      if (missing) problems.push(`${where}: done, but ${missing} of its ${mine.length} transfers are missing`);
      if (c.rows !== mine.length) problems.push(`${where}: done with ${c.rows} rows counted, the chain has ${mine.length}`);
      continue;
    }
    if (c.resumeToBlock === null) {
      // pages of no rows may come first (a node page over blocks where the contract logged nothing moves the page key
      // and no block position), but no row
      if (c.rows !== 0) problems.push(`${where}: no position, but ${c.pages} pages / ${c.rows} rows counted`);
      continue;
    }
    const above = mine.filter((t) => t.blockNumber > c.resumeToBlock!);
    const missing = above.filter((t) => !have.has(transferKey(t))).length;
    if (missing) problems.push(`${where}: ${missing} of the ${above.length} transfers above its position are missing`);
    const atOrAbove = mine.filter((t) => t.blockNumber >= c.resumeToBlock!).length;
    if (c.rows < above.length || c.rows > atOrAbove) {
      problems.push(`${where}: ${c.rows} rows counted, expected ${above.length}…${atOrAbove}`);
    }
  }
  return problems;
}
