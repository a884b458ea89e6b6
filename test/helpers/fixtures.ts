import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The real mainnet dataset the tests read (test/fixtures/mainnet; its README.md says where every line comes from). */
export const FIXTURE_DIR = fileURLToPath(new URL('../fixtures/mainnet', import.meta.url));

/** Real headers of other chains, a folder per chain id (test/fixtures/chains; its README.md says which rule each exercises). */
export const CHAINS_FIXTURE_DIR = fileURLToPath(new URL('../fixtures/chains', import.meta.url));

/** A header as a node answers it (JSON-RPC), with the fields every test reads. */
export type RawHeader = Record<string, unknown> & { hash: string; number: string; timestamp: string };

/** The objects of a JSON-lines file, read at once (fixtures are small); blank lines are skipped. */
export function readJsonLines<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as T);
}

/** The real headers of test/fixtures/chains, each with the chain id of its folder. */
export function readChainHeaders(): { chainId: number; header: RawHeader }[] {
  return readdirSync(CHAINS_FIXTURE_DIR)
    .filter((dir) => /^\d+$/.test(dir))
    .flatMap((dir) => readJsonLines<RawHeader>(join(CHAINS_FIXTURE_DIR, dir, 'headers.jsonl')).map((header) => ({ chainId: Number(dir), header })));
}

/** What a block's transfers say about its header: its hash, number and time (ISO). */
export function expectedOf(header: { hash: string | null; number: string | null; timestamp: string | null }): { hash: string; number: number; timestamp: string } {
  return { hash: header.hash!, number: Number(BigInt(header.number!)), timestamp: new Date(Number(BigInt(header.timestamp!)) * 1000).toISOString() };
}

/** A copy of the header with `key` changed in its last hex digit (or a numeric field, AuRa's `step`, plus one). */
export function changedField<T extends Record<string, unknown>>(header: T, key: string): T {
  const value = header[key];
  if (typeof value === 'number') return { ...header, [key]: value + 1 };
  const text = String(value);
  return { ...header, [key]: `${text.slice(0, -1)}${text.at(-1) === '0' ? '1' : '0'}` };
}
