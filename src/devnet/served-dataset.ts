/**
 * A dataset folder as the reference server serves it (node-source.md, "Reference server"): its headers
 * exactly as given, every key kept, whatever the chain family (Arbitrum's `l1BlockNumber`, Gnosis' `step`,
 * a block's `transactions`, …), and its transfers and tokens as `readDataset` reads and checks them.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../common/errors.ts';
import { readJsonl } from '../dataset/jsonl.ts';
import { readDataset } from '../dataset/read.ts';
import { DATASET_FILES, type Dataset } from '../dataset/types.ts';
import type { HeaderJson } from '../eth/header-fields.ts';
import { isHexQuantity } from '../eth/hex.ts';

const MAX_PROBLEMS = 20;
const HASH = /^0x[0-9a-f]{64}$/;

/**
 * Reads `dir`. A folder of headers only (`transfers.jsonl` and `tokens.jsonl` absent or empty) is a chain
 * without transfers, and its headers need only a `hash`, a `number` and a `timestamp`; a folder with
 * transfers or tokens is checked whole by `readDataset` (Ethereum headers, every transfer's block present).
 *
 * @example
 * const ds = await readServedDataset('chains/100'); // Gnosis headers: `step` and `signature` served as they are
 * ds.transfers.length; // 0
 */
export async function readServedDataset(dir: string): Promise<Dataset> {
  const headers = await readHeadersAsGiven(dir);
  const holdsRows = [DATASET_FILES.transfers, DATASET_FILES.tokens].some((file) => hasLines(join(dir, file)));
  if (!holdsRows) return { headers, transfers: [], tokens: [] };
  const checked = await readDataset(dir);
  return { headers, transfers: checked.transfers, tokens: checked.tokens };
}

/** The lines of headers.jsonl as they are, each checked for the three keys the server indexes and serves by. */
async function readHeadersAsGiven(dir: string): Promise<HeaderJson[]> {
  const file = join(dir, DATASET_FILES.headers);
  if (!existsSync(file)) throw datasetError(dir, [`${DATASET_FILES.headers}: missing`]);
  const problems: string[] = [];
  const headers: HeaderJson[] = [];
  const seen = new Set<string>();
  for await (const { line, value } of readJsonl(file)) {
    const where = `${DATASET_FILES.headers} line ${line}`;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      problems.push(`${where}: expected a JSON object`);
      continue;
    }
    const h = value as Record<string, unknown>;
    const bad = [
      typeof h.hash === 'string' && HASH.test(h.hash) ? '' : `field hash: expected a lower-case 0x hash of 64 hex digits, got ${JSON.stringify(h.hash)}`,
      ...(['number', 'timestamp'] as const).map((k) =>
        typeof h[k] === 'string' && isHexQuantity(h[k]) ? '' : `field ${k}: expected a 0x hex quantity, got ${JSON.stringify(h[k])}`,
      ),
      typeof h.hash === 'string' && seen.has(h.hash) ? `hash ${h.hash} is on an earlier line too` : '',
    ].filter(Boolean);
    for (const problem of bad) problems.push(`${where}: ${problem}`);
    if (bad.length) continue;
    seen.add(h.hash as string);
    headers.push(h as HeaderJson);
  }
  if (problems.length) throw datasetError(dir, problems.slice(0, MAX_PROBLEMS));
  return headers;
}

/** Whether `file` exists and holds more than white space (read a chunk at a time: it may be large). */
function hasLines(file: string): boolean {
  if (!existsSync(file)) return false;
  const fd = openSync(file, 'r');
  try {
    const chunk = Buffer.alloc(64 * 1024);
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) {
      if (chunk.subarray(0, n).toString('latin1').trim() !== '') return true;
    }
    return false;
  } finally {
    closeSync(fd);
  }
}

function datasetError(dir: string, problems: string[]): ConfigError {
  return new ConfigError(`dataset ${dir} cannot be used:`, problems, 'Fix these lines (chain-api.md §3 describes the format).');
}
