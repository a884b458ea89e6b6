import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { ERIGON_HEADER_KEYS, type HeaderJson } from '../eth/header-fields.ts';
import { DATASET_FILES, TRANSFER_KEYS, type Dataset, type TokenRecord, type TransferRecord } from './types.ts';

const ERIGON_KEY_SET = new Set<string>(ERIGON_HEADER_KEYS);

/**
 * One dataset line, keys in a fixed order so that the same data always gives the same bytes: Erigon's, then any
 * other keys the header has, in its own order (another chain's fields, such as Avalanche's `extDataHash`).
 */
export function headerLine(h: HeaderJson): string {
  return JSON.stringify(h, [...ERIGON_HEADER_KEYS, ...Object.keys(h).filter((k) => !ERIGON_KEY_SET.has(k))]);
}

export function transferLine(t: TransferRecord): string {
  return JSON.stringify(t, TRANSFER_KEYS as unknown as string[]);
}

export function tokenLine(t: TokenRecord): string {
  const symbolKey = t.contractSymbols !== undefined && t.contractSymbol === undefined ? 'contractSymbols' : 'contractSymbol';
  return JSON.stringify(t, ['contractAddress', 'contractName', symbolKey, 'contractDecimals']);
}

/** Writes lines to a file in large chunks, waiting when the disk is behind. */
async function writeLines(path: string, lines: Iterable<string>): Promise<void> {
  const out = createWriteStream(path, { encoding: 'utf8' });
  let chunk: string[] = [];
  for (const line of lines) {
    chunk.push(line);
    if (chunk.length === 5000) {
      if (!out.write(`${chunk.join('\n')}\n`)) await once(out, 'drain');
      chunk = [];
    }
  }
  if (chunk.length) out.write(`${chunk.join('\n')}\n`);
  out.end();
  await once(out, 'finish');
}

function* map<T>(items: Iterable<T>, f: (item: T) => string): Iterable<string> {
  for (const item of items) yield f(item);
}

/** Writes the three files of a dataset into `dir` (created if needed). */
export async function writeDataset(dir: string, dataset: Dataset): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeLines(join(dir, DATASET_FILES.headers), map(dataset.headers, headerLine));
  await writeLines(join(dir, DATASET_FILES.transfers), map(dataset.transfers, transferLine));
  await writeLines(join(dir, DATASET_FILES.tokens), map(dataset.tokens, tokenLine));
}
