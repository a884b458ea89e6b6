/**
 * Where a job comes from: a job file (`erc20-etl run jobs/NAME.json`) or the flags of
 * `erc20-etl backfill`. Either way every problem is reported at once, in one ConfigError.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError } from '../common/errors.ts';
import { DEFAULT_CHAIN, isPageSize, jobSchema, MAX_BLOCK_NUMBER, MAX_CHAIN_ID, PAGE_SIZE_BUILDER_ONLY, SOURCE_EXPECTED, SOURCE_KINDS, type JobConfig } from './job-schema.ts';
import { describeIssues, duplicateKeys, jsonSyntaxProblem } from './problems.ts';

const JOB_FILE_HINT = 'Fix them and run again. jobs/job.schema.json describes every field; with "$schema": "./job.schema.json" in the file, editors check it as you type.';

/**
 * Reads and validates a job file. Unreadable file, invalid JSON or any schema problems: one ConfigError
 * (exit code 2) whose every line names the file and the field.
 *
 * @example const job = await loadJobFile('jobs/demo.json'); // → { name: 'demo', contracts: [...], pageSize: 1000, ... }
 * // ConfigError: Invalid job file jobs/nightly.json (1 problem):
 * //   jobs/nightly.json: contracts[1].fromBlock: expected an integer ≥ 0, got -5
 */
export async function loadJobFile(path: string): Promise<Readonly<JobConfig>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`Cannot read the job file ${path}:`, [`${path}: ${readFailure(e)}`], 'Check the path, e.g. erc20-etl run jobs/demo.json.');
  }
  return parseJobText(text, path);
}

/**
 * Validates the text of a job file; `file` only names it in messages.
 *
 * @example parseJobText('{"name": "x", "contracts": [{"address": "0xA0b8…", "fromBlock": 0}]}', 'x.json').contracts[0].address
 * // → '0xa0b8…' (lower case)
 */
export function parseJobText(text: string, file: string): Readonly<JobConfig> {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  let input: unknown;
  try {
    input = JSON.parse(body);
  } catch (e) {
    const where = jsonSyntaxProblem(body) ?? (e as Error).message;
    throw new ConfigError(`Invalid job file ${file}: it is not valid JSON`, [`${file}: ${where}`], 'Fix the JSON and run again.');
  }
  const parsed = jobSchema.safeParse(input);
  const problems = [...duplicateKeys(body), ...(parsed.success ? [] : describeIssues(parsed.error.issues, input, { schema: jobSchema }))].map((p) => `${file}: ${p}`);
  if (problems.length || !parsed.success) {
    throw new ConfigError(`Invalid job file ${file} (${count(problems.length)}):`, problems, JOB_FILE_HINT);
  }
  return deepFreeze(parsed.data);
}

/** The flags of `erc20-etl backfill`, as commander hands them over. */
export interface BackfillFlags {
  contract?: string[];
  from?: string;
  to?: string;
  pageSize?: string;
  concurrency?: string;
  headerBatchSize?: string;
  commitRows?: string;
  /** `--keep-indexes`: a first load keeps its lookup indexes up row by row. */
  keepIndexes?: boolean;
  /** `builder` (the default) or `node`. */
  source?: string;
  /** The chain id (`--chain`); chain 1 when left out. */
  chain?: string;
  /** Seconds; see `rpcTimeoutMs`. Not part of the job: checked here with the other flags. */
  rpcTimeout?: string;
}

const FLAG_NAMES: Readonly<Record<string, string>> = {
  contract: '--contract',
  from: '--from',
  to: '--to',
  pageSize: '--page-size',
  concurrency: '--concurrency',
  headerBatchSize: '--header-batch-size',
  commitRows: '--commit-rows',
  keepIndexes: '--keep-indexes',
  source: '--source',
  chain: '--chain',
  rpcTimeout: '--rpc-timeout',
};

/** `--rpc-timeout SECONDS`: how long a node source waits for one JSON-RPC answer before it asks for less. */
export const RPC_TIMEOUT_SECONDS = { default: 30, min: 0.1, max: 3600 } as const;
const RPC_TIMEOUT_EXPECTED = `expected seconds from ${RPC_TIMEOUT_SECONDS.min} to ${RPC_TIMEOUT_SECONDS.max}, like ${RPC_TIMEOUT_SECONDS.default}`;
const rpcTimeoutFlag = z
  .string({ error: RPC_TIMEOUT_EXPECTED })
  .regex(/^[0-9]{1,6}(?:\.[0-9]{1,3})?$/, { error: RPC_TIMEOUT_EXPECTED })
  .transform(Number)
  .pipe(z.number().min(RPC_TIMEOUT_SECONDS.min, { error: RPC_TIMEOUT_EXPECTED }).max(RPC_TIMEOUT_SECONDS.max, { error: RPC_TIMEOUT_EXPECTED }));

/**
 * The `--rpc-timeout` of a command in milliseconds: the flag's seconds, else 30 s.
 *
 * @example rpcTimeoutMs({ rpcTimeout: '2.5' }) // → 2500
 * @example rpcTimeoutMs({ rpcTimeout: '0' }) // ConfigError: --rpc-timeout: expected seconds from 0.1 to 3600, like 30, got "0"
 */
export function rpcTimeoutMs(flags: { rpcTimeout?: string | undefined }): number {
  if (flags.rpcTimeout === undefined) return RPC_TIMEOUT_SECONDS.default * 1000;
  const parsed = rpcTimeoutFlag.safeParse(flags.rpcTimeout);
  if (!parsed.success) throw new ConfigError(`--rpc-timeout: ${RPC_TIMEOUT_EXPECTED}, got ${JSON.stringify(flags.rpcTimeout)}.`);
  return Math.round(parsed.data * 1000);
}

const ADDRESS = 'expected a contract address (0x and 40 hex digits); repeat --contract for several';
const BLOCK = 'expected a block number (integer ≥ 0)';

/** What a chain id flag (`--chain`, `migrate --chain-id`) must be. */
const CHAIN_FLAG = 'expected a chain id, an integer ≥ 1 (1 Ethereum, 10 OP Mainnet, 8453 Base, …)';

/**
 * A chain id flag's value as a number, or a ConfigError naming the flag and what it must be.
 *
 * @example chainIdFlag('8453', '--chain-id') // → 8453
 */
export function chainIdFlag(value: string, flag: string): number {
  const parsed = chainFlag.safeParse(value);
  if (!parsed.success) throw new ConfigError(`${flag}: ${CHAIN_FLAG}, got ${JSON.stringify(value)}.`);
  return parsed.data;
}

const flagInteger = (expected: string, min: number, max: number) =>
  z
    .string({ error: expected })
    .regex(/^[0-9]+$/, { error: expected })
    .transform(Number)
    .pipe(z.number().min(min, { error: expected }).max(max, { error: expected }));

const chainFlag = flagInteger(CHAIN_FLAG, 1, MAX_CHAIN_ID);

const backfillFlags = z
  .object({
    contract: z
      .array(z.string().regex(/^0x[0-9a-fA-F]{40}$/, { error: ADDRESS }), { error: ADDRESS })
      .min(1, { error: ADDRESS })
      .superRefine(
        (list, ctx) => {
          const lower = list.map((a) => (typeof a === 'string' ? a.toLowerCase() : a));
          lower.forEach((a, i) => {
            if (lower.indexOf(a) < i) ctx.addIssue({ code: 'custom', path: [i], input: a, message: `${String(a)} is given twice; expected each contract once` });
          });
        },
        { when: ({ value }) => Array.isArray(value) },
      ),
    from: flagInteger(BLOCK, 0, MAX_BLOCK_NUMBER),
    to: flagInteger(BLOCK, 0, MAX_BLOCK_NUMBER),
    pageSize: flagInteger('expected an integer from 1 to 1000', 1, 1000).optional(),
    concurrency: flagInteger('expected an integer from 1 to 64', 1, 64).optional(),
    headerBatchSize: flagInteger('expected an integer from 1 to 1000', 1, 1000).optional(),
    commitRows: flagInteger('expected an integer from 1 to 1000000', 1, 1_000_000).optional(),
    keepIndexes: z.boolean().optional(),
    source: z.enum(SOURCE_KINDS, { error: SOURCE_EXPECTED }).optional(),
    chain: flagInteger(CHAIN_FLAG, 1, MAX_CHAIN_ID).optional(),
    rpcTimeout: rpcTimeoutFlag.optional(),
  })
  .refine((f) => f.from <= f.to, {
    path: ['to'],
    error: (issue) => {
      const f = issue.input as { from: number; to: number };
      return `--from (${f.from}) is greater than --to (${f.to}); expected --from ≤ --to`;
    },
    when: ({ value }) => {
      const f = value as { from?: unknown; to?: unknown };
      return typeof f.from === 'number' && typeof f.to === 'number';
    },
  })
  .refine((f) => f.pageSize === undefined || f.source !== 'node', {
    path: ['pageSize'],
    error: PAGE_SIZE_BUILDER_ONLY,
    when: ({ value }) => {
      const f = value as { pageSize?: unknown; source?: unknown };
      // a --page-size out of range says so already
      return isPageSize(f.pageSize) && f.source === 'node';
    },
  });

/**
 * The job of `erc20-etl backfill`: the same shape as a job file, named `backfill-<8 hex>` after its
 * contracts (in any order) and range, so the same backfill always has the same lock and ledger name (through
 * either source: one range is not read by two backfills at once). `--rpc-timeout` is checked with the other
 * flags, but is no part of the job (see `rpcTimeoutMs`).
 *
 * @example backfillJob({ contract: ['0xA0b8…eB48'], from: '100', to: '200' })
 * // → { name: 'backfill-1f0c2a9e', contracts: [{ address: '0xa0b8…eb48', fromBlock: 100, toBlock: 200 }], pageSize: 1000, concurrency: 4, headerBatchSize: 100, finality: 64, source: 'builder' }
 */
export function backfillJob(flags: BackfillFlags): Readonly<JobConfig> {
  const input = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
  const parsed = backfillFlags.safeParse(input);
  if (!parsed.success) {
    const name = (path: readonly PropertyKey[]) => FLAG_NAMES[String(path[0])] ?? String(path[0]);
    const problems = describeIssues(parsed.error.issues, input, { name });
    throw new ConfigError(`Invalid options for erc20-etl backfill (${count(problems.length)}; see erc20-etl backfill --help):`, problems);
  }
  const f = parsed.data;
  const addresses = f.contract.map((a) => a.toLowerCase());
  // chain 1's backfills keep the names they had before chains were named
  const chain = f.chain === undefined || f.chain === DEFAULT_CHAIN ? '' : `@${f.chain}`;
  const id = createHash('sha256')
    .update(`${[...addresses].sort().join(',')}:${f.from}-${f.to}${chain}`)
    .digest('hex')
    .slice(0, 8);
  return deepFreeze(
    jobSchema.parse({
      name: `backfill-${id}`,
      contracts: addresses.map((address) => ({ address, fromBlock: f.from, toBlock: f.to })),
      ...(f.pageSize !== undefined && { pageSize: f.pageSize }),
      ...(f.concurrency !== undefined && { concurrency: f.concurrency }),
      ...(f.headerBatchSize !== undefined && { headerBatchSize: f.headerBatchSize }),
      ...(f.commitRows !== undefined && { commitRows: f.commitRows }),
      ...(f.keepIndexes !== undefined && { keepIndexes: f.keepIndexes }),
      ...(f.source !== undefined && { source: f.source }),
      ...(f.chain !== undefined && { chain: f.chain }),
    }),
  );
}

function count(n: number): string {
  return n === 1 ? '1 problem' : `${n} problems`;
}

function readFailure(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a folder, expected a job file like jobs/demo.json';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return (e as Error).message;
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
