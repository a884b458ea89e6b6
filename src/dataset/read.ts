import { existsSync } from 'node:fs';
import { ConfigError } from '../common/errors.ts';
import { join } from 'node:path';
import { toErigonHeader, type HeaderJson } from '../eth/header-fields.ts';
import { isHexData, isHexQuantity } from '../eth/hex.ts';
import { readJsonl } from './jsonl.ts';
import { DATASET_FILES, type Dataset, type TokenRecord, type TransferRecord } from './types.ts';
import { checkAddress, show, TRANSFER_FIELD_CHECKS } from './validate.ts';

/** A dataset folder that cannot be served: lists every problem found (up to a limit), each with file and line. */
class DatasetError extends ConfigError {
  constructor(
    readonly dir: string,
    problems: string[],
  ) {
    super(`dataset ${dir} cannot be used:`, problems, 'Fix these lines (chain-api.md §3 describes the format), or write a valid dataset with `erc20-etl devnet dump --out DIR`.');
  }
}

const MAX_PROBLEMS = 20;

/**
 * Reads and checks a dataset folder (`headers.jsonl`, `transfers.jsonl`, `tokens.jsonl`). Strings that
 * repeat (addresses, block hashes, timestamps) are shared, so a large dataset stays small in memory.
 */
export async function readDataset(dir: string): Promise<Dataset> {
  const problems: string[] = [];
  const note = (text: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(text);
  };
  for (const file of Object.values(DATASET_FILES)) {
    if (!existsSync(join(dir, file))) note(`${file}: missing`);
  }
  if (problems.length) throw new DatasetError(dir, problems);

  const intern = new Map<string, string>();
  const shared = (s: string) => {
    const known = intern.get(s);
    if (known !== undefined) return known;
    intern.set(s, s);
    return s;
  };

  const headers: HeaderJson[] = [];
  const blocks = new Map<string, { number: number; timestamp: number }>();
  for await (const { line, value } of readJsonl(join(dir, DATASET_FILES.headers))) {
    const where = `${DATASET_FILES.headers} line ${line}`;
    try {
      const header = toErigonHeader(asObject(value));
      for (const [key, v] of Object.entries(header)) {
        if (v !== null && !isHexData(v) && !isHexQuantity(v)) note(`${where}: field ${key}: expected 0x hex, got ${show(v)}`);
      }
      headers.push(header);
      blocks.set(header.hash, { number: Number(BigInt(header.number!)), timestamp: Number(BigInt(header.timestamp!)) });
    } catch (err) {
      note(`${where}: ${(err as Error).message}`);
    }
  }

  const transfers: TransferRecord[] = [];
  for await (const { line, value } of readJsonl(join(dir, DATASET_FILES.transfers))) {
    const where = `${DATASET_FILES.transfers} line ${line}`;
    const t = asObject(value);
    let ok = true;
    for (const [key, check] of TRANSFER_FIELD_CHECKS) {
      const problem = check(t[key]);
      if (problem) {
        note(`${where}: field ${key}: ${problem}`);
        ok = false;
      }
    }
    if (!ok) continue;
    const block = blocks.get(t.blockHash as string);
    if (!block) {
      note(`${where}: blockHash ${t.blockHash} has no line in ${DATASET_FILES.headers}`);
      continue;
    }
    if (block.number !== t.blockNumber) {
      note(`${where}: blockNumber ${t.blockNumber} differs from its header's number ${block.number}`);
    }
    if (Date.parse(t.blockTimestamp as string) !== block.timestamp * 1000) {
      note(`${where}: blockTimestamp ${t.blockTimestamp} differs from its header's timestamp`);
    }
    transfers.push({
      contractAddress: shared(t.contractAddress as string),
      fromAddress: shared(t.fromAddress as string),
      toAddress: shared(t.toAddress as string),
      value: t.value as string,
      blockHash: shared(t.blockHash as string),
      blockNumber: t.blockNumber as number,
      blockTimestamp: shared(t.blockTimestamp as string),
      transactionHash: t.transactionHash as string,
      transactionIndex: t.transactionIndex as number,
      logIndex: t.logIndex as number,
    });
  }

  const tokens: TokenRecord[] = [];
  for await (const { line, value } of readJsonl(join(dir, DATASET_FILES.tokens))) {
    const where = `${DATASET_FILES.tokens} line ${line}`;
    const t = asObject(value);
    const problem = checkAddress(t.contractAddress);
    if (problem) note(`${where}: field contractAddress: ${problem}`);
    for (const key of ['contractName', 'contractDecimals'] as const) {
      if (typeof t[key] !== 'string') note(`${where}: field ${key}: expected text, got ${show(t[key])}`);
    }
    const symbolKey = 'contractSymbols' in t && !('contractSymbol' in t) ? 'contractSymbols' : 'contractSymbol';
    if (typeof t[symbolKey] !== 'string') note(`${where}: field ${symbolKey}: expected text, got ${show(t[symbolKey])}`);
    tokens.push({
      contractAddress: t.contractAddress as string,
      contractName: t.contractName as string,
      [symbolKey]: t[symbolKey] as string,
      contractDecimals: t.contractDecimals as string,
    });
  }

  if (problems.length) throw new DatasetError(dir, problems);
  return { headers, transfers, tokens };
}

function asObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`expected a JSON object, got ${show(value)}`);
  }
  return value as Record<string, unknown>;
}
