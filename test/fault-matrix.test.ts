import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../src/dataset/types.ts';
import type { FaultOptions } from '../src/devnet/faults.ts';
import type { DevnetConfig } from '../src/devnet/server.ts';
import { generateSyntheticDataset, type SyntheticOptions } from '../src/devnet/synthetic.ts';
import type { JobConfig } from '../src/config/job-schema.ts';
import {
  contractsOf,
  diffTransfers,
  EXACT,
  FAULT_ERROR_KEYS,
  injectedFaults,
  startCompetitor,
  writeFigures,
  type CompetitorCounts,
  type InjectedFaults,
  type TransferDiff,
} from './helpers/chaos.ts';
import { rpc, startDevnet } from './helpers/devnet.ts';
import { datasetTransfers, job, migratedWarehouse, runExport, truthOf, warehouseTransfers } from './helpers/exporter.ts';

const PAGE_SIZE = 100;
const COMPETITOR_RPS = 15;

const SOURCES = ['builder', 'node'] as const;
type SourceKind = (typeof SOURCES)[number];
/** A node job's eth_getLogs spans: the server caps them at this many blocks (Infura's refusals, with the limit). */
const NODE_SPAN = 60;
interface Setup {
  options: SyntheticOptions;
  /** The reference server's settings besides the case's faults. */
  devnet: Partial<DevnetConfig>;
  /** What the job is besides its contracts. */
  job: Partial<JobConfig>;
  /** Where the figures go (`.data/figures/NAME.json`). */
  figures: string;
  /** Server error keys that are no fault: a node's eth_getLogs refused as too large (Infura's -32005), and not counted as a retry. */
  refusals: ReadonlySet<string>;
}
const SETUPS: Record<SourceKind, Setup> = {
  // 20,000 transfers of 3 tokens over 20,000 blocks: ~4,700 blocks carry transfers, so enrichment posts
  // ~48 header batches; pages of 100 rows make ~210 getTokenTransfers requests per run
  builder: {
    options: { seed: 21, blocks: 20_000, tokens: 3, transfers: 20_000, startBlock: 18_000_000 },
    devnet: {},
    job: { pageSize: PAGE_SIZE, concurrency: 4 },
    figures: 'fault-matrix',
    refusals: new Set(),
  },
  // a node job (eth_getLogs, headers by erigon_getHeaderByHash for each span's blocks, eth_call): 2,000 transfers
  // of 3 tokens over 2,000 blocks in spans of at most 60 blocks, ~100 eth_getLogs calls and as many header
  // batches per run, about as many requests as the builder job's, on a smaller chain
  node: {
    options: { seed: 21, blocks: 2_000, tokens: 3, transfers: 2_000, startBlock: 18_000_000 },
    devnet: { logsLimits: { maxRange: NODE_SPAN, style: 'infura' } },
    job: { source: 'node', logsRange: NODE_SPAN, concurrency: 4 },
    figures: 'fault-matrix-node',
    refusals: new Set(['-32005', '-32602']),
  },
};

interface FaultCase {
  name: string;
  faults: FaultOptions;
  rateLimit?: number;
  /**
   * Requests per second of another client of the same project id. The exporter alone runs at about the
   * limit, so without one its 429s would depend on how busy the machine is.
   */
  competitorRps?: number;
  /** The kinds of `InjectedFaults` this case must have injected into the exporter at least once to prove anything. */
  injects: readonly (keyof InjectedFaults)[];
}

const ALL: FaultOptions = { failRate: 0.05, resetRate: 0.02, truncateRate: 0.02, headerLagRate: 0.05, latencyMs: [1, 20] };
/**
 * The cases, per source (CASES_OF). Every fault of this matrix is of HTTP or JSON-RPC answers (a 5xx, a reset, a cut body,
 * a header not found yet, a 429, latency), which a node's answers meet as the builder API's: a node job gets
 * them all. (Faults of the builder API alone, such as page keys that expire, are not in this matrix.)
 */
const CASES: readonly FaultCase[] = [
  { name: 'fail-rate 0.05', faults: { failRate: 0.05 }, injects: ['failures'] },
  { name: 'reset-rate 0.02', faults: { resetRate: 0.02 }, injects: ['resets'] },
  { name: 'truncate-rate 0.02', faults: { truncateRate: 0.02 }, injects: ['truncated'] },
  { name: 'header-lag-rate 0.05', faults: { headerLagRate: 0.05 }, injects: ['headerLags'] },
  { name: 'rate-limit 30', faults: {}, rateLimit: 30, competitorRps: COMPETITOR_RPS, injects: ['rateLimited'] },
  { name: 'latency-ms 1-20', faults: { latencyMs: [1, 20] }, injects: [] },
  { name: 'all together', faults: ALL, rateLimit: 30, competitorRps: COMPETITOR_RPS, injects: ['failures', 'resets', 'truncated', 'headerLags', 'rateLimited'] },
];

const CASES_OF: Record<SourceKind, readonly FaultCase[]> = { builder: CASES, node: CASES };

interface CaseFigures {
  case: string;
  faults: FaultOptions & { rateLimit?: number; competitorRps?: number };
  /** Everything the server injected (its /__stats), and the part of it that the other client got. */
  injected: InjectedFaults;
  competitor?: CompetitorCounts;
  /** What the exporter got: injected minus the competitor's part. */
  injectedIntoExporter: InjectedFaults;
  server: { getTokenTransfers: number; rpcHttpRequests: number; headerLookups: number; errors: Record<string, number> };
  ledger: { status: string; apiRequests: number; retries: number; rateLimited: number; headersFetched: number; rowsInserted: number };
  rows: Omit<TransferDiff, 'examples'>;
  headers: { expected: number; stored: number };
  ms: number;
}

describe.each(SOURCES)('%s jobs: the exporter under injected faults', (source) => {
  const { options: OPTIONS, devnet: devnetSettings, job: jobSettings, figures: figuresName, refusals } = SETUPS[source];
  let dataset: Dataset;
  /**
   * eth_call answers -32000 (a revert, JSON-RPC's code of a header not found too) for the getters of a token
   * whose metadata the chain lacks: a node job's run asks each getter once; these are no header lags.
   */
  let reverts = 0;
  // what /__truth serves for this dataset: every case's server starts from it and none reorganizes
  let truth: Dataset;
  const figures: CaseFigures[] = [];
  beforeAll(async () => {
    dataset = generateSyntheticDataset(OPTIONS);
    const plain = await startDevnet(dataset);
    try {
      truth = await truthOf(plain.origin);
      if (source === 'node') {
        for (const contract of contractsOf(dataset)) {
          for (const data of ['0x06fdde03', '0x95d89b41', '0x313ce567']) {
            const { body } = await rpc(plain.base, { jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: contract, data }, 'latest'] });
            if (body.error) reverts++;
          }
        }
      }
    } finally {
      await plain.close();
    }
  });
  afterAll(async () => {
    await writeFigures(figuresName, {
      dataset: { ...OPTIONS, contracts: contractsOf(dataset).length },
      ...(source === 'node' ? { source, logsSpanBlocks: NODE_SPAN, tokenGetterReverts: reverts } : { pageSize: PAGE_SIZE }),
      concurrency: 4,
      cases: figures,
    });
  });

  it.each(CASES_OF[source])(
    '$name: the warehouse equals /__truth and the ledger counts every retry and 429 the server caused',
    async (c) => {
      const devnet = await startDevnet(dataset, { ...devnetSettings, faults: c.faults, rateLimit: c.rateLimit, seed: 1000 + CASES.indexOf(c) });
      const target = await migratedWarehouse(`faults_${source}_${c.name}`);
      try {
        const contracts = contractsOf(dataset);
        const head = OPTIONS.startBlock + OPTIONS.blocks - 1;
        const config = job(
          `faults-${CASES.indexOf(c)}`,
          contracts.map((address) => ({ address, fromBlock: OPTIONS.startBlock, toBlock: head })),
          jobSettings,
        );
        const competitor = c.competitorRps === undefined ? undefined : startCompetitor(devnet.base, c.competitorRps);
        const started = performance.now();
        const summary = await runExport(target.url, devnet.base, config).finally(() => competitor?.stop());
        const ms = Math.round(performance.now() - started);
        const rival = await competitor?.stop();
        const stats = await devnet.stats();

        // the data: exactly the truth, no row lost, none twice, none different
        const rows = await warehouseTransfers(target.warehouse);
        const expected = datasetTransfers(truth);
        const diff = diffTransfers(rows, expected);
        expect(diff).toMatchObject({ rows: OPTIONS.transfers, expected: OPTIONS.transfers, ...EXACT });

        // every transfer's block has its header, verified, and no other header was stored
        const wanted = new Set(truth.transfers.map((t) => t.blockHash));
        const stored = await target.warehouse.db.selectFrom('block_headers').select(['hash', 'number', 'parent_hash', 'hash_verified', 'canonical']).execute();
        expect(stored.map((h) => h.hash).sort()).toEqual([...wanted].sort());
        const truthHeaders = new Map(truth.headers.map((h) => [h.hash, h]));
        const wrongHeaders = stored.filter((h) => {
          const t = truthHeaders.get(h.hash);
          return !h.hash_verified || !h.canonical || !t || BigInt(h.number) !== BigInt(t.number!) || h.parent_hash !== t.parentHash;
        });
        expect(wrongHeaders).toEqual([]);

        // the faults this case is about really happened to the exporter, and nothing else went wrong on the server
        const counted = injectedFaults(stats);
        // a node job's token getters that revert answer -32000 as a lagging header does: not lags. Each is
        // answered at least once, and again when its answer was cut short (a reset, a truncated body): so the
        // -32000 answers beyond the reverts are the lags, give or take those cut answers
        const revertSlack = source === 'node' ? counted.resets + counted.truncated : 0;
        const beyondReverts = counted.headerLags - reverts;
        if (source === 'node' && !c.faults.headerLagRate) {
          expect(beyondReverts, '-32000 answers beyond the token getters’ reverts').toBeGreaterThanOrEqual(0);
          expect(beyondReverts, '-32000 answers beyond the token getters’ reverts').toBeLessThanOrEqual(revertSlack);
        }
        const injected: InjectedFaults = source === 'builder' ? counted : { ...counted, headerLags: c.faults.headerLagRate ? beyondReverts : 0 };
        expect(rival?.other ?? 0, 'answers to the other client that are no fault').toBe(0);
        const exporterGot: InjectedFaults = {
          failures: injected.failures - (rival?.failures ?? 0),
          resets: injected.resets - (rival?.resets ?? 0),
          truncated: injected.truncated - (rival?.truncated ?? 0),
          rateLimited: injected.rateLimited - (rival?.rateLimited ?? 0),
          headerLags: injected.headerLags,
        };
        // with another client on the same project id, which of the two meets a given rare fault is chance:
        // then each kind must have been injected, and the exporter must have met faults, but not every kind
        for (const kind of c.injects) {
          if (c.competitorRps && kind !== 'rateLimited') expect(injected[kind], `${kind} injected`).toBeGreaterThan(0);
          else expect(exporterGot[kind], `${kind} injected into the exporter`).toBeGreaterThan(0);
        }
        if (c.injects.length)
          expect(
            Object.values(exporterGot).reduce((a, b) => a + b, 0),
            'faults the exporter met',
          ).toBeGreaterThan(0);
        for (const kind of Object.keys(injected) as (keyof InjectedFaults)[]) {
          if (!c.injects.includes(kind)) expect(injected[kind], `${kind} not configured`).toBe(0);
        }
        expect(Object.keys(stats.errors).filter((k) => !FAULT_ERROR_KEYS.has(k) && !refusals.has(k))).toEqual([]);

        // the run ledger agrees with the server: every HTTP attempt, a retry for each failed one (5xx, reset,
        // cut body, 429), and each 429
        const ledger = await target.warehouse.db.selectFrom('export_runs').selectAll().where('id', '=', summary.runId).executeTakeFirstOrThrow();
        expect({
          status: ledger.status,
          apiRequests: Number(ledger.api_requests),
          retries: Number(ledger.retries),
          rateLimited: Number(ledger.rate_limited),
          headersFetched: Number(ledger.headers_fetched),
        }).toEqual({
          status: 'succeeded',
          apiRequests: stats.getTokenTransfers + stats.rpcHttpRequests - (rival?.requests ?? 0),
          retries: exporterGot.failures + exporterGot.resets + exporterGot.truncated + exporterGot.rateLimited,
          rateLimited: exporterGot.rateLimited,
          headersFetched: wanted.size,
        });
        expect(summary.totals).toMatchObject({ apiRequests: Number(ledger.api_requests), retries: Number(ledger.retries), rateLimited: Number(ledger.rate_limited) });

        // a lagging header is not an HTTP failure: enrichment asks for it again in a later batch, so the
        // server answers each hash once, plus once per lag, plus the lookups of batches whose answer was cut
        const headerLookups = (stats.rpcCalls.erigon_getHeaderByHash ?? 0) + (stats.rpcCalls.eth_getBlockByHash ?? 0);
        if (exporterGot.resets + exporterGot.truncated === 0) expect(headerLookups).toBe(wanted.size + injected.headerLags);
        else expect(headerLookups).toBeGreaterThanOrEqual(wanted.size + injected.headerLags - revertSlack);

        figures.push({
          case: c.name,
          faults: { ...c.faults, ...(c.rateLimit !== undefined && { rateLimit: c.rateLimit }), ...(c.competitorRps !== undefined && { competitorRps: c.competitorRps }) },
          injected,
          ...(rival && { competitor: rival }),
          injectedIntoExporter: exporterGot,
          server: { getTokenTransfers: stats.getTokenTransfers, rpcHttpRequests: stats.rpcHttpRequests, headerLookups, errors: stats.errors },
          ledger: {
            status: ledger.status,
            apiRequests: Number(ledger.api_requests),
            retries: Number(ledger.retries),
            rateLimited: Number(ledger.rate_limited),
            headersFetched: Number(ledger.headers_fetched),
            rowsInserted: Number(ledger.rows_inserted),
          },
          rows: { rows: diff.rows, expected: diff.expected, lost: diff.lost, extra: diff.extra, duplicated: diff.duplicated, changed: diff.changed },
          headers: { expected: wanted.size, stored: stored.length },
          ms,
        });
      } finally {
        await target.drop();
        await devnet.close();
      }
    },
    180_000,
  );
});
