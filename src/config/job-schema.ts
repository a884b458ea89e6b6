/**
 * The job file (`jobs/NAME.json`): which contracts to export over which blocks, and how hard to pull.
 * Every message here says what was expected; `problems.ts` adds the field and what was got.
 */
import { z } from 'zod';
import { defaultFinality, finalityDefaults } from './chain-defaults.ts';
import { CRON_EXPECTED, cronProblem } from './cron.ts';

/**
 * A job's `commitRows` when it states none, by source. Builder: ten pages. Commits are pipelined (the next
 * transaction's pages are written while one commits), so their number costs little: every 20,000 rows against every
 * page took 5.3–6.0 s of PostgreSQL CPU and 7.1–7.8 s in all against 5.8–6.9 s and 8.8–10.4 s (200,000 transfers,
 * PostgreSQL 15, hand runs); every 10,000 rows (with `read-chunk.ts`' 24 unannounced pages) held fewer rows and
 * was faster than every 20,000 (with 16): mean 6.4 s against 6.9 s in four alternating runs, peak RSS 160–174 MB
 * against 168–186 MB. Node: an answer holds up to 10,000 logs, and its rows stay in memory until their transaction
 * commits: 5,000 makes about a transaction per answer. Measured on 1,000,000 transfers, cap 10,000, concurrency 4
 * (hand runs): peak RSS 205–225 MB in six runs, four of them ≤ 208 MB, against 222–227 MB in two with 20,000; wall
 * time within noise. The peak is not set by this alone. The chunks read at once COPY through a run's lanes (at most
 * two, `copy-lanes.ts`), each lane's transaction committing at its share (`commitRows ÷ lanes`): the whole of it per
 * chunk held more (builder, 1,000,000 transfers, a lane per chunk, concurrency 4: peak RSS 198–208 MB against
 * 178–189 MB with the share, wall time within noise).
 */
export const COMMIT_ROWS_DEFAULTS = { builder: 10_000, node: 5_000 } as const;

/** The largest block number a JS number holds exactly. */
export const MAX_BLOCK_NUMBER = Number.MAX_SAFE_INTEGER;

/** The largest chain id a job may name (EIP-2294 bounds chain ids far lower; this one keeps it an exact number). */
export const MAX_CHAIN_ID = Number.MAX_SAFE_INTEGER;

/** The chain a job without `chain` is taken for: Ethereum mainnet. */
export const DEFAULT_CHAIN = 1;

/** Rows per getTokenTransfers page when a job states none. */
export const DEFAULT_PAGE_SIZE = 1000;

/** Whether `value` is a page size a job may state (an integer from 1 to 1000): one out of range is reported as such. */
export function isPageSize(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 1000;
}

/** What is wrong with a page size given to a node job. */
export const PAGE_SIZE_BUILDER_ONLY = 'applies to "source": "builder" only (rows per getTokenTransfers page; an eth_getLogs answer holds what its range holds); drop it';

/**
 * A JSON integer from `min` to `max`; every failure reads `expected …`. Text like `"100"` is refused
 * (problems.ts adds "write numbers without quotes"): a typo must not become a number silently.
 */
function integer(min: number, max: number, expected: string) {
  const error = (issue: { code?: string }) => (issue.code === 'too_big' && max === MAX_BLOCK_NUMBER ? `expected an integer ≤ ${MAX_BLOCK_NUMBER}` : expected);
  // not `.int()`: its failure stops zod from running the job's other checks (the cross-field ones, such as logsRange
  // without "source": "node"), so a job file's other problems went unsaid. An integer beyond 2^53 fails `max` alone.
  return (
    z
      .number({ error })
      // `got`: problems.ts adds the value, as for zod's own checks
      .refine(Number.isInteger, { error, params: { got: true } })
      .min(min, { error })
      .max(max, { error })
      .meta({ type: 'integer' })
  );
}

const blockNumber = () => integer(0, MAX_BLOCK_NUMBER, 'expected an integer ≥ 0');

/** Where a job reads the chain: the hosted builder API (the default), or any Ethereum node's standard JSON-RPC. */
export const SOURCE_KINDS = ['builder', 'node'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];
export const SOURCE_EXPECTED = 'expected "builder" (the hosted builder API) or "node" (any Ethereum node\'s JSON-RPC)';

/**
 * What a run does with a header its chain's hash rule cannot verify (a chain whose rule this exporter does not
 * know, or a header with fields the rule cannot encode): store it unverified, saying so once per run (the
 * default), or fail the run.
 */
export const VERIFY_HEADERS = ['allow-unverified', 'require'] as const;
export const VERIFY_HEADERS_EXPECTED =
  'expected "allow-unverified" (headers that cannot be verified are stored with hash_verified = false and the reason) or "require" (such a header fails the run)';

/** The most blocks one `eth_getLogs` call asks for, whatever the job says: the node source's cap (reth's default limit). */
export const MAX_LOGS_RANGE = 100_000;

/** `0x` and 40 hex digits in any case, normalised to lower case. */
export const contractAddress = z
  .string({ error: 'expected a contract address: 0x and 40 hex digits' })
  .regex(/^0x[0-9a-fA-F]{40}$/, { error: 'expected a contract address: 0x and 40 hex digits' })
  .meta({
    title: 'Contract address',
    description: 'The ERC20 token contract: 0x and 40 hex digits, in any case.',
    examples: ['0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48'],
  })
  .transform((address) => address.toLowerCase());

const contract = z
  .strictObject(
    {
      address: contractAddress,
      fromBlock: blockNumber().meta({
        title: 'First block',
        description: 'The first block to export, inclusive. A JSON integer ≥ 0.',
      }),
      toBlock: blockNumber().optional().meta({
        title: 'Last block',
        description: 'The last block to export, inclusive, ≥ fromBlock. Leave it out to follow the chain head, re-reading the last `finality` blocks each run.',
      }),
    },
    { error: 'expected a contract like {"address": "0x…", "fromBlock": 0}' },
  )
  .refine((c) => c.toBlock === undefined || c.toBlock >= c.fromBlock, {
    path: ['toBlock'],
    error: (issue) => {
      const c = issue.input as { fromBlock: number; toBlock: number };
      return `fromBlock (${c.fromBlock}) is greater than toBlock (${c.toBlock}); expected toBlock ≥ fromBlock`;
    },
    // Also when a sibling key is wrong (an unknown key, say): every problem is reported at once.
    when: ({ value }) => {
      const c = value as { fromBlock?: unknown; toBlock?: unknown };
      return Number.isSafeInteger(c?.fromBlock) && Number.isSafeInteger(c?.toBlock);
    },
  });

const contracts = z
  .array(contract, { error: 'expected an array of contracts like [{"address": "0x…", "fromBlock": 0}]' })
  .min(1, { error: 'expected at least one contract' })
  .superRefine(
    (list, ctx) => {
      const first = new Map<string, number>();
      (list as unknown[]).forEach((c, i) => {
        const address = (c as { address?: unknown } | null)?.address;
        if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address)) return;
        const key = address.toLowerCase();
        const seen = first.get(key);
        if (seen === undefined) first.set(key, i);
        else {
          ctx.addIssue({
            code: 'custom',
            path: [i, 'address'],
            input: address,
            message: `${key} is listed twice (also at contracts[${seen}]); expected each contract once`,
          });
        }
      });
    },
    // Also when another contract has a problem: every problem is reported at once.
    { when: ({ value }) => Array.isArray(value) },
  );

/** The job file as written; `$schema` (for editors) is dropped from the parsed value. */
export const jobSchema = z
  .strictObject(
    {
      $schema: z
        .string({ error: 'expected a string (the path of job.schema.json, for editors)' })
        .optional()
        .meta({ description: 'For editors: the JSON Schema of this file, e.g. "./job.schema.json". Ignored by erc20-etl.' }),
      name: z
        .string({ error: 'expected a job name' })
        .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, {
          error: 'expected a job name of 1–100 letters, digits, ".", "_" or "-", starting with a letter or digit',
        })
        .meta({
          title: 'Job name',
          description: 'Names the job in logs, in the run ledger and as its lock: 1–100 letters, digits, ".", "_" or "-", starting with a letter or digit.',
          examples: ['nightly'],
        }),
      chain: integer(1, MAX_CHAIN_ID, `expected a chain id, an integer from 1 to ${MAX_CHAIN_ID} (1 Ethereum, 10 OP Mainnet, 8453 Base, …)`)
        .optional()
        .meta({
          title: 'Chain',
          description:
            "The chain's id, as its endpoint's eth_chainId answers it (EIP-155): 1 Ethereum, 10 OP Mainnet, 8453 Base, 42161 Arbitrum One, 137 Polygon PoS, …. A run checks the endpoint serves this chain before it writes anything. Leave it out and chain 1 is assumed, with a warning.",
          examples: [1],
        }),
      verifyHeaders: z.enum(VERIFY_HEADERS, { error: VERIFY_HEADERS_EXPECTED }).default('allow-unverified').meta({
        title: 'Header verification',
        description:
          'What a run does with a block header its chain\'s hash rule cannot verify (a chain whose rule erc20-etl does not know, such as zkSync Era; or a header with fields the rule cannot encode, such as a new fork\'s): "allow-unverified" stores it with hash_verified = false and the reason, and warns once per run; "require" fails the run, naming the block. A header that fails its chain\'s rule fails the run either way.',
      }),
      contracts: contracts.meta({
        title: 'Contracts',
        description: 'The token contracts to export, each with its block range; each address at most once.',
      }),
      pageSize: integer(1, 1000, 'expected an integer from 1 to 1000')
        .optional()
        .meta({ title: 'Page size', description: 'For "source": "builder": transfers per getTokenTransfers request, 1 to 1000.', default: DEFAULT_PAGE_SIZE }),
      concurrency: integer(1, 64, 'expected an integer from 1 to 64').default(4).meta({ title: 'Concurrency', description: 'Requests in flight at once, 1 to 64.' }),
      requestsPerSecond: z.number({ error: 'expected a number > 0' }).positive({ error: 'expected a number > 0' }).optional().meta({
        title: 'Requests per second',
        description: "At most this many API requests per second (fractions allowed, e.g. 0.5). Leave it out for no limit beyond the server's 429s.",
      }),
      headerBatchSize: integer(1, 1000, 'expected an integer from 1 to 1000').default(100).meta({
        title: 'Header batch size',
        description:
          'erigon_getHeaderByHash calls per JSON-RPC POST, 1 to 1000. Erigon refuses batches larger than its --rpc.batch.limit (100 by default); where your endpoint allows more, a larger batch leaves more of a requests-per-second limit to pages.',
      }),
      commitRows: integer(1, 1_000_000, 'expected an integer from 1 to 1000000')
        .optional()
        .meta({
          title: 'Rows a first load commits at once',
          description: `Blocks the warehouse holds no transfer of yet are loaded through COPY: the chunks read at once share at most two COPY streams (lanes), each on a connection of its own; a lane's transaction commits with its chunks' positions once it holds its share of this many rows (this ÷ the lanes, at most concurrency; a queued task's chunk: all of it), after a second, or once one of its chunks has 24 pages or 24,000 rows waiting for their headers (the most it reads ahead of them), whichever comes first, so it holds at most its share and one page more: a crash or a kill re-reads at most what the open transactions held. 1 to 1000000. Fewer rows commit more often (each commit costs the load a little); blocks that hold rows already are merged a page at a time. Leave it out for the source's default: ${COMMIT_ROWS_DEFAULTS.builder} for "builder" (about 10 pages), ${COMMIT_ROWS_DEFAULTS.node} for "node" (an eth_getLogs answer holds up to 10,000 logs: about a transaction per answer, so fewer are held in memory until their commit).`,
        }),
      keepIndexes: z.boolean({ error: 'expected true or false' }).optional().meta({
        title: 'Keep the lookup indexes during a first load',
        description:
          "false: a run into a token_transfers that holds no row yet (a first load, whoever's) drops its lookup indexes (by block hash, sender and recipient; never the primary key, nor the index by contract and block) and builds them after its rows, when the role of DATABASE_URL owns the table: faster for a large load that PostgreSQL would otherwise hold up, while queries by those columns scan the table until the run ends. true keeps them up row by row. Leave it out for false, or for true when the job states requestsPerSecond: a load its API holds up leaves PostgreSQL time to keep them up, and a build after its rows would only add to the run.",
      }),
      finality: integer(0, 10_000, 'expected an integer from 0 to 10000')
        .optional()
        .meta({
          title: 'Finality',
          description: `When following the chain head: how many of the newest blocks are read again on every run, to pick up reorgs. 0 to 10000. Leave it out for the chain's default: ${finalityDefaults()}.`,
        }),
      source: z.enum(SOURCE_KINDS, { error: SOURCE_EXPECTED }).default('builder').meta({
        title: 'Source',
        description:
          'Where the transfers are read: "builder", the hosted builder API (getTokenTransfers pages); or "node", any Ethereum node or RPC provider through standard JSON-RPC (eth_getLogs). CHAIN_API_URL is then the node\'s JSON-RPC URL.',
      }),
      logsRange: integer(1, MAX_LOGS_RANGE, `expected an integer from 1 to ${MAX_LOGS_RANGE}`)
        .optional()
        .meta({
          title: 'First eth_getLogs range',
          description: `For "source": "node": the blocks the first eth_getLogs call asks for, 1 to ${MAX_LOGS_RANGE}; the range then adapts to what the node answers. Leave it out to start from the range the last run of this job learned from the same endpoint host, else 2000.`,
        }),
      schedule: z
        .string({ error: CRON_EXPECTED })
        // graphile-worker's crontab refuses spaces around the pattern: the worker is given it trimmed
        .trim()
        .superRefine((value, ctx) => {
          const problem = cronProblem(value);
          if (problem) ctx.addIssue({ code: 'custom', message: `${CRON_EXPECTED}; ${problem}, got ${JSON.stringify(value)}` });
        })
        .optional()
        .meta({
          title: 'Schedule',
          description:
            'When `erc20-etl worker --schedule` enqueues this job: a cron expression in UTC (minute hour day-of-month month day-of-week), e.g. "0 2 * * *" for 02:00 every day. It fires once however many workers run.',
          examples: ['0 2 * * *'],
        }),
    },
    { error: 'expected a JSON object like {"name": "…", "contracts": [{"address": "0x…", "fromBlock": 0}]}' },
  )
  .refine((job) => job.logsRange === undefined || job.source === 'node', {
    path: ['logsRange'],
    error: 'applies to "source": "node" only (eth_getLogs ranges); add "source": "node", or drop it',
    // also when another field has a problem: every problem is reported at once
    when: ({ value }) => {
      const job = value as { logsRange?: unknown; source?: unknown } | null;
      return job !== null && typeof job === 'object' && job.logsRange !== undefined && (job.source === undefined || job.source === 'builder');
    },
  })
  .refine((job) => job.pageSize === undefined || job.source === 'builder', {
    path: ['pageSize'],
    error: PAGE_SIZE_BUILDER_ONLY,
    when: ({ value }) => {
      const job = value as { pageSize?: unknown; source?: unknown } | null;
      // a pageSize out of range says so already
      return job !== null && typeof job === 'object' && isPageSize(job.pageSize) && job.source === 'node';
    },
  })
  // a job that states no `finality` gets its chain's (chain-defaults.ts): what every reader of `finality` sees
  // nor `commitRows`: its source's; nor `keepIndexes`: whether it states a request rate
  .transform(({ $schema: _ignored, ...job }) => ({
    ...job,
    pageSize: job.pageSize ?? DEFAULT_PAGE_SIZE,
    finality: job.finality ?? defaultFinality(job.chain ?? DEFAULT_CHAIN),
    commitRows: job.commitRows ?? COMMIT_ROWS_DEFAULTS[job.source],
    keepIndexes: job.keepIndexes ?? job.requestsPerSecond !== undefined,
  }))
  .meta({
    title: 'erc20-etl job',
    description: 'A job for `erc20-etl run jobs/NAME.json`: the ERC20 contracts to export and their block ranges.',
  });

/** A validated job, with defaults filled in (`finality`: the chain's, when the job states none) and addresses in lower case. */
export type JobConfig = z.output<typeof jobSchema>;

/**
 * The chain a job is for: its `chain`, else chain 1 (`stated: false`, which a run warns about, naming the field).
 *
 * @example jobChain({ chain: 8453 }) // → { chain: 8453, stated: true }
 * jobChain({}) // → { chain: 1, stated: false }
 */
export function jobChain(job: Pick<JobConfig, 'chain'>): { chain: number; stated: boolean } {
  return job.chain === undefined ? { chain: DEFAULT_CHAIN, stated: false } : { chain: job.chain, stated: true };
}
