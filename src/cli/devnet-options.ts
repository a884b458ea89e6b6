import { z } from 'zod';
import { ConfigError } from '../common/errors.ts';
import { formatIssues } from '../common/zod-problems.ts';
import { AMOUNTS_PROFILES, type AmountsProfile, type SyntheticOptions } from '../devnet/synthetic.ts';
import type { FaultOptions } from '../devnet/faults.ts';
import { DEFAULT_LOGS_ERROR_STYLE, LOGS_ERROR_STYLES, type LogsLimits } from '../devnet/logs-limit-errors.ts';
import type { DevnetServerOptions } from '../devnet/server.ts';

/** The flags of `erc20-etl devnet` as commander hands them over: text, or repeated text. */
export type DevnetFlags = Record<string, string | string[] | boolean | undefined>;

// one check, one message (as a job file's numbers): an integer from `min`, at most the largest JavaScript keeps exact
const int = (min: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, { error: `expected an integer ≥ ${min}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .refine((n) => n >= min, { error: `expected an integer ≥ ${min}`, abort: true })
        .refine((n) => Number.isSafeInteger(n), { error: `expected an integer from ${min} to ${Number.MAX_SAFE_INTEGER}` }),
    );

const rate = z
  .string()
  .regex(/^(?:0|1|0?\.[0-9]+|1\.0*)$/, { error: 'expected a probability from 0 to 1, like 0.05' })
  .transform(Number);

const latency = z
  .string()
  .regex(/^[0-9]+(?:-[0-9]+)?$/, { error: 'expected milliseconds A or a range A-B, like 1-20' })
  .transform((text) => text.split('-').map(Number))
  .refine((r) => r.length === 1 || r[0]! <= r[1]!, { error: 'expected A ≤ B in A-B' })
  .transform((r) => [r[0]!, r[1] ?? r[0]!] as const);

const projectId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,128}$/, { error: 'expected letters, digits, _ or - (at most 128)' })
  .refine((id) => !id.startsWith('__') && id !== 'healthz', { error: 'is reserved for the control plane' });

const schema = z.object({
  dataset: z.string().min(1).optional(),
  seed: int(0).default(1),
  blocks: int(1).optional(),
  tokens: int(1).optional(),
  transfers: int(0).optional(),
  startBlock: int(0).optional(),
  amounts: z.enum(AMOUNTS_PROFILES, { error: `expected ${AMOUNTS_PROFILES.join(' or ')}` }).optional(),
  port: int(0)
    .pipe(z.number().max(65535, { error: 'expected a port from 0 to 65535' }))
    .default(8545),
  host: z.string().min(1).default('127.0.0.1'),
  projectId: z.array(projectId).min(1).default(['demo']),
  chainId: int(1).default(1),
  latencyMs: latency.optional(),
  rateLimit: int(1).optional(),
  rpcBatchLimit: int(1).optional(),
  failRate: rate.optional(),
  resetRate: rate.optional(),
  truncateRate: rate.optional(),
  headerLagRate: rate.optional(),
  quota: int(0).optional(),
  pageKeyTtl: int(1).default(86_400),
  faultSeed: int(0).optional(),
  erigon: z.boolean().default(true),
  logsMaxRange: int(0).default(0),
  logsMaxResults: int(0).default(0),
  logsErrorStyle: z.enum(LOGS_ERROR_STYLES, { error: `expected ${LOGS_ERROR_STYLES.join(', ')}` }).optional(),
  logsHangRate: rate.optional(),
});

export interface DevnetOptions extends DevnetServerOptions {
  /** Serve this dataset folder; otherwise a synthetic chain. */
  dataset?: string;
  synthetic: SyntheticOptions;
  /** How the synthetic chain's transfer values look. */
  amounts: AmountsProfile;
  /** The server's seed (DevnetConfig.seed): --fault-seed, else --seed. */
  faultSeed: number;
}

const flagName = (path: readonly PropertyKey[]) => `--${String(path[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** Validates every flag at once; throws a ConfigError listing each problem with its flag. */
export function parseDevnetOptions(flags: DevnetFlags, syntheticDefaults: SyntheticOptions): Readonly<DevnetOptions> {
  const input = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    throw new ConfigError('Invalid options for erc20-etl devnet (see erc20-etl devnet --help):', formatIssues(parsed.error.issues, input, flagName));
  }
  const o = parsed.data;
  const generation = ['blocks', 'tokens', 'transfers', 'startBlock', 'amounts'] as const;
  const mixed = o.dataset !== undefined ? generation.filter((k) => o[k] !== undefined) : [];
  if (mixed.length) {
    throw new ConfigError('Invalid options for erc20-etl devnet:', [`--dataset serves a folder as it is; drop ${mixed.map((k) => flagName([k])).join(', ')} or drop --dataset`]);
  }
  const faults: FaultOptions = {
    ...(o.latencyMs && { latencyMs: o.latencyMs }),
    ...(o.failRate !== undefined && { failRate: o.failRate }),
    ...(o.resetRate !== undefined && { resetRate: o.resetRate }),
    ...(o.truncateRate !== undefined && { truncateRate: o.truncateRate }),
    ...(o.headerLagRate !== undefined && { headerLagRate: o.headerLagRate }),
    ...(o.logsHangRate !== undefined && { logsHangRate: o.logsHangRate }),
  };
  const logsLimits: LogsLimits | undefined =
    o.logsMaxRange || o.logsMaxResults
      ? {
          ...(o.logsMaxRange > 0 && { maxRange: o.logsMaxRange }),
          ...(o.logsMaxResults > 0 && { maxResults: o.logsMaxResults }),
          style: o.logsErrorStyle ?? DEFAULT_LOGS_ERROR_STYLE,
        }
      : undefined;
  return Object.freeze({
    ...(o.dataset !== undefined && { dataset: o.dataset }),
    synthetic: {
      seed: o.seed,
      blocks: o.blocks ?? syntheticDefaults.blocks,
      tokens: o.tokens ?? syntheticDefaults.tokens,
      transfers: o.transfers ?? syntheticDefaults.transfers,
      startBlock: o.startBlock ?? syntheticDefaults.startBlock,
    },
    amounts: o.amounts ?? 'edge-cases',
    host: o.host,
    port: o.port,
    projectIds: [...new Set(o.projectId)],
    chainId: o.chainId,
    faults,
    ...(o.rateLimit !== undefined && { rateLimit: o.rateLimit }),
    ...(o.rpcBatchLimit !== undefined && { rpcBatchLimit: o.rpcBatchLimit }),
    ...(o.quota !== undefined && { quota: o.quota }),
    pageKeyTtlSeconds: o.pageKeyTtl,
    erigon: o.erigon,
    ...(logsLimits && { logsLimits }),
    faultSeed: o.faultSeed ?? o.seed,
  });
}
