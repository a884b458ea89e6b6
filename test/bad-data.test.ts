import { mkdir, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { HTTP_DEFAULTS } from '../src/cli/api-clients.ts';
import type { Dataset, TransferRecord } from '../src/dataset/types.ts';
import {
  BODY_CORRUPTIONS,
  HEADER_CORRUPTIONS,
  LOGS_BODY_CORRUPTIONS,
  LOGS_CORRUPTIONS,
  PAGE_CORRUPTIONS,
  type CorruptionKind,
  type CorruptionOrder,
  type ServedCorruption,
} from '../src/devnet/corruption.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { BLOCK_CORRUPTIONS } from '../src/devnet/corruption.ts';
import { backfillJob } from '../src/config/load-job.ts';
import type { JobConfig } from '../src/config/job-schema.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { captureLogger, datasetTransfers, job, migratedWarehouse, runExport, warehouseTransfers } from './helpers/exporter.ts';

const OPTIONS = { seed: 21, blocks: 300, tokens: 3, transfers: 3000, startBlock: 100 };
const FIGURES = new URL('../.data/figures/', import.meta.url);

type Outcome = 'failed' | 'tolerated';

/** What a case knows when it checks the message: the contract it aimed at and what the server damaged. */
interface Served {
  contract: string;
  block: number;
  /** The log index of the damaged log (eth_getLogs kinds), else -1. */
  log: number;
  field: string;
}

interface BadDataCase {
  kind: CorruptionKind;
  outcome: Outcome;
  /** What the failure message (thrown, and in export_runs.error) or the logged warning must say. */
  says: (s: Served) => RegExp;
  /** Headers are fetched once: a header case first forgets some, so the run has to fetch them again. */
  forgetHeaders?: boolean;
}

const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `contract 0x…, block N, tokenTransfers[i].field: expected …` as parseTransfersPage words a bad field. */
const badField = (s: Served) => new RegExp(`contract ${s.contract}, block ${s.block}, ${esc(s.field)}: expected`);

const CASES: BadDataCase[] = [
  { kind: 'bad-address', outcome: 'failed', says: badField },
  { kind: 'negative-value', outcome: 'failed', says: badField },
  { kind: 'non-numeric-value', outcome: 'failed', says: badField },
  { kind: 'overflow-value', outcome: 'failed', says: badField },
  { kind: 'missing-field', outcome: 'failed', says: (s) => new RegExp(`${badField(s).source} a lower-case 0x hash of 64 hex digits, got nothing`) },
  { kind: 'bad-timestamp', outcome: 'failed', says: badField },
  {
    kind: 'count-mismatch',
    outcome: 'failed',
    says: (s) => new RegExp(`contract ${s.contract}, blocks \\d+–\\d+ \\(this page: blocks \\d+–${s.block}\\), count: expected the number of rows in tokenTransfers \\(\\d+\\)`),
  },
  {
    kind: 'duplicate-in-page',
    outcome: 'tolerated',
    says: (s) =>
      new RegExp(
        `contract ${s.contract}, block ${s.block}, ${esc(s.field)}: the same transfer \\(transactionHash 0x[0-9a-f]{64}, logIndex \\d+\\) as tokenTransfers\\[\\d+\\], served twice; kept once`,
      ),
  },
  {
    kind: 'duplicate-across-pages',
    outcome: 'tolerated',
    says: (s) =>
      new RegExp(
        `contract ${s.contract}, block ${s.block}, tokenTransfers\\[0\\]: the same transfer \\(transactionHash 0x[0-9a-f]{64}, logIndex \\d+\\) as the last row of the previous page, served twice; kept once`,
      ),
  },
  {
    kind: 'conflicting-duplicate',
    outcome: 'failed',
    says: (s) =>
      new RegExp(
        `contract ${s.contract}, block ${s.block}, tokenTransfers\\[0\\]\\.value: the same transfer .* as the last row of the previous page, which said "\\d+", got "\\d+"`,
      ),
  },
  {
    kind: 'repeating-page-key',
    outcome: 'failed',
    says: (s) => new RegExp(`contract ${s.contract}, blocks \\d+–\\d+, with a nextPageKey it had already given, which would page forever`),
  },
  {
    kind: 'html-200',
    outcome: 'tolerated',
    says: (s) => new RegExp(`\\(contract ${s.contract}, blocks \\d+–\\d+\\): HTTP 200 with a text/html body that is not JSON .*an error page`),
  },
  {
    kind: 'huge-body',
    outcome: 'failed',
    says: (s) =>
      new RegExp(`\\(contract ${s.contract}, blocks \\d+–\\d+\\): the answer is larger than the response size limit of ${HTTP_DEFAULTS.maxResponseBytes} bytes; reading stopped`),
  },
  {
    kind: 'header-bad-hash',
    outcome: 'failed',
    forgetHeaders: true,
    says: (s) =>
      new RegExp(
        `block ${s.block} \\(0x[0-9a-f]{64}\\), header: keccak256 of its RLP fields is 0x[0-9a-f]{64}, not the block hash 0x[0-9a-f]{64} \\(chain 1's ethereum rule\\): a field was altered`,
      ),
  },
  {
    kind: 'header-wrong-number',
    outcome: 'failed',
    forgetHeaders: true,
    says: (s) => new RegExp(`block ${s.block} \\(0x[0-9a-f]{64}\\), header\\.number: expected ${s.block} \\(the block of the transfers\\), got 0x[0-9a-f]+ \\(${s.block + 1}\\)`),
  },
];

/** The field of a log as readTransferLog names it: `data` of the served `result[3].data`. */
const logField = (s: Served) => esc(s.field.replace(/^result\[\d+\]\./, ''));
/** `contract 0x…, block N, log L, field: expected` as readTransferLog words a bad field of a log. */
const badLogField = (s: Served) => `contract ${s.contract}, block ${s.block}, log ${s.log}, ${logField(s)}: expected`;
/** The summary readLogsAnswer opens its list of problems with: the call's contract and blocks. */
const malformedLogs = (s: Served) => `eth_getLogs answered a malformed result for contract ${s.contract}, blocks? \\d+(?:–\\d+)?`;

/**
 * The eth_getLogs answers a node job meets: the node-source analogues of the page and body kinds, armed as
 * those are (the busiest contract, once). Each fails the run naming contract, block, log and field, but an
 * HTML page, which the HTTP client retries (as for builder pages), and an answer too large to read, after which
 * fewer blocks are asked. A node answering a log twice fails the run, where a builder page's duplicate row is
 * kept once.
 */
const LOGS_CASES: BadDataCase[] = [
  { kind: 'logs-bad-address', outcome: 'failed', says: (s) => new RegExp(`${badLogField(s)} an address topic \\(12 zero bytes, then 20 bytes\\), got "0xff0{22}`) },
  { kind: 'logs-non-hex-value', outcome: 'failed', says: (s) => new RegExp(`${badLogField(s)} 0x hex bytes, got "\\d+"`) },
  { kind: 'logs-missing-field', outcome: 'failed', says: (s) => new RegExp(`${badLogField(s)} a 0x hash of 64 hex digits, got nothing`) },
  {
    kind: 'logs-bad-timestamp',
    outcome: 'failed',
    says: (s) =>
      new RegExp(`contract ${s.contract}, block ${s.block}, log \\d+, blockTimestamp: expected (0x[0-9a-f]+) \\(\\S+, the block header's time\\), got 0x[0-9a-f]+ \\(\\S+\\)`),
  },
  {
    kind: 'logs-duplicate',
    outcome: 'failed',
    says: (s) =>
      new RegExp(
        `${malformedLogs(s)}[\\s\\S]*contract ${s.contract}, block ${s.block}, log ${s.log}, ${esc(s.field)}: the same log twice \\(block ${s.block} log ${s.log}, as result\\[\\d+\\]\\): ` +
          'expected each log once, in chain order',
      ),
  },
  {
    kind: 'logs-outside-range',
    outcome: 'failed',
    says: (s) =>
      new RegExp(
        `${malformedLogs(s)}[\\s\\S]*contract ${s.contract}, block ${s.block}, log ${s.log}, ${esc(s.field)}: expected a block from \\d+ to \\d+ \\(the queried range\\), got ${s.block}`,
      ),
  },
  {
    kind: 'logs-other-contract',
    outcome: 'failed',
    says: (s) =>
      new RegExp(`${malformedLogs(s)}[\\s\\S]*contract (?!${s.contract})(0x[0-9a-f]{40}), block ${s.block}, log ${s.log}, ${esc(s.field)}: expected a contract asked for, got \\1`),
  },
  {
    kind: 'logs-bloom',
    outcome: 'failed',
    says: (s) =>
      new RegExp(
        `transaction 0x[0-9a-f]{64}, log ${s.log}, contract ${s.contract}, block ${s.block} \\(0x[0-9a-f]{64}\\): the block header's logsBloom rules out its contract address: the transfer is not in that block`,
      ),
  },
  {
    kind: 'logs-html-200',
    outcome: 'tolerated',
    says: (s) => new RegExp(`POST \\S+ \\(contract ${s.contract}, blocks? \\d+(?:–\\d+)?\\): HTTP 200 with a text/html body that is not JSON .*an error page`),
  },
  {
    kind: 'logs-huge-body',
    outcome: 'tolerated',
    says: () => new RegExp(`"reason":"an answer larger than the response size limit of ${HTTP_DEFAULTS.maxResponseBytes} bytes"`),
  },
];

const key = (t: TransferRecord) => `${t.transactionHash}:${t.logIndex}`;

const SOURCES = ['builder', 'node'] as const;
type SourceKind = (typeof SOURCES)[number];
/**
 * The kinds each source can be served. A builder job reads getTokenTransfers pages: the page kinds (rows, counts,
 * duplicates, page keys) and the body kinds (an HTML page, a huge body). A node job reads eth_getLogs answers
 * instead: the logs kinds, their analogues. Both read headers by hash (erigon_getHeaderByHash, or
 * eth_getBlockByHash, which a node job reads for every span's blocks): the header kinds damage those.
 */
const isHeaderKind = (c: BadDataCase) => (HEADER_CORRUPTIONS as readonly string[]).includes(c.kind);
/**
 * A transfer's log whose data is 31 bytes: no uint256, and no ABI encoding (whole 32-byte words) at all. It comes
 * last: were it taken for another shape of log and skipped, the committed row it stands for would go, and every
 * case after it would start from a warehouse short of that row.
 */
const SHORT_VALUE_CASE: BadDataCase = { kind: 'logs-short-value', outcome: 'failed', says: (s) => new RegExp(badLogField(s)) };
const CASES_OF: Record<SourceKind, readonly BadDataCase[]> = {
  builder: CASES,
  node: [...LOGS_CASES, ...CASES.filter(isHeaderKind), SHORT_VALUE_CASE],
};
const KINDS_OF: Record<SourceKind, readonly CorruptionKind[]> = {
  builder: [...PAGE_CORRUPTIONS, ...BODY_CORRUPTIONS, ...HEADER_CORRUPTIONS],
  node: [...LOGS_CORRUPTIONS, ...LOGS_BODY_CORRUPTIONS, ...HEADER_CORRUPTIONS],
};

describe.each(SOURCES)('%s jobs: bad data from the API', (source) => {
  let dataset: Dataset;
  let devnet: RunningDevnet;
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  let truth: TransferRecord[];
  /** The contract with the most transfers: several pages per chunk, so cross-page kinds apply. */
  let busiest: string;
  const figures: {
    kind: CorruptionKind;
    outcome: Outcome;
    message: string;
    rowsLost: number;
    rowsExtra: number;
    rowsChanged: number;
    runs: number;
    rssGrowthMb?: number;
  }[] = [];

  beforeAll(async () => {
    dataset = generateSyntheticDataset(OPTIONS);
    devnet = await startDevnet(dataset);
    target = await migratedWarehouse(`bad_data_${source}`);
    truth = datasetTransfers(dataset);
    const counts = new Map<string, number>();
    for (const t of dataset.transfers) counts.set(t.contractAddress, (counts.get(t.contractAddress) ?? 0) + 1);
    busiest = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
  });
  afterAll(async () => {
    if (figures.length) {
      await mkdir(FIGURES, { recursive: true });
      const report = {
        dataset: OPTIONS,
        job: { source, ...(source === 'builder' && { pageSize: 200 }), concurrency: 2, finality: 1000 },
        kinds: figures.map((f) => f.kind),
        outcomes: Object.fromEntries(figures.map((f) => [f.kind, f.outcome])),
        failed: figures.filter((f) => f.outcome === 'failed').length,
        tolerated: figures.filter((f) => f.outcome === 'tolerated').length,
        rowsLost: figures.reduce((a, f) => a + f.rowsLost, 0),
        rowsDuplicatedOrExtra: figures.reduce((a, f) => a + f.rowsExtra, 0),
        rowsChanged: figures.reduce((a, f) => a + f.rowsChanged, 0),
        responseCapBytes: HTTP_DEFAULTS.maxResponseBytes,
        cases: figures,
      };
      await writeFile(new URL(source === 'builder' ? 'bad-data.json' : 'bad-data-node.json', FIGURES), `${JSON.stringify(report, null, 2)}\n`);
    }
    await target?.drop();
    await devnet?.close();
  });

  const contracts = () => [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort();
  // finality above the chain's length: every run re-reads every page of every contract
  const followHead = () =>
    job(
      'bad-data',
      contracts().map((address) => ({ address, fromBlock: OPTIONS.startBlock })),
      { pageSize: 200, concurrency: 2, finality: 1000, ...(source === 'node' && { source: 'node' }) },
    );
  /**
   * Where a header case forgets the stored headers from. A builder run fetches only the headers it lacks: the
   * newest 50 blocks. A node run fetches the header of every block of its spans (for their logs blooms), so the
   * damaged one may be of any block: it forgets them all, and the damaged header is one it must store again.
   */
  const forgetFrom = source === 'builder' ? OPTIONS.startBlock + 250 : OPTIONS.startBlock;

  type Control = { armed: CorruptionOrder | null; served: ServedCorruption[]; error?: { message: string } };
  /** POSTs to `/__control/<path>`, or GETs `/__control/corrupt` without a body. */
  const control = async (path: 'corrupt' | 'corrupt/clear', body?: unknown) => {
    const res = await fetch(`${devnet.origin}/__control/${path}`, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Control };
  };
  const lastRun = () => target.warehouse.db.selectFrom('export_runs').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
  const rowsRewritten = async () =>
    Number((await sql<{ n: string }>`SELECT count(*)::text AS n FROM token_transfers WHERE updated_by_run <> inserted_by_run`.execute(target.warehouse.db)).rows[0]!.n);
  const rowsRemoved = async () => (await target.warehouse.db.selectFrom('token_transfers_removed').select('id').execute()).length;

  /** The warehouse against the truth: rows missing, rows that should not be there, rows with other fields. */
  async function compareWithTruth() {
    const rows = await warehouseTransfers(target.warehouse);
    const stored = new Map(rows.map((t) => [key(t), t]));
    const wanted = new Map(truth.map((t) => [key(t), t]));
    return {
      rows,
      lost: truth.filter((t) => !stored.has(key(t))).length,
      extra: rows.length - rows.filter((t) => wanted.has(key(t))).length,
      changed: rows.filter((t) => wanted.has(key(t)) && JSON.stringify(t) !== JSON.stringify(wanted.get(key(t)))).length,
    };
  }

  it('exports the whole chain once, cleanly, before any bad data', async () => {
    await runExport(target.url, devnet.base, followHead());
    expect(await warehouseTransfers(target.warehouse)).toEqual(truth);
    const headers = await target.warehouse.db.selectFrom('block_headers').select(['hash', 'hash_verified']).execute();
    expect(new Set(headers.map((h) => h.hash))).toEqual(new Set(truth.map((t) => t.blockHash)));
    expect(headers.every((h) => h.hash_verified)).toBe(true);
  });

  // the control plane is the same whatever the job reads: asked once, with the builder jobs
  if (source === 'builder')
    it('the reference server arms, lists and clears bad data on /__control/corrupt, refusing what it does not know', async () => {
      const bad = await control('corrupt', { kind: 'no-such-kind' });
      expect(bad.status).toBe(400);
      expect(bad.body.error?.message).toMatch(/unknown kind "no-such-kind".*bad-address, negative-value/);
      expect((await control('corrupt', { kind: 'negative-value', contract: busiest, times: 2 })).body.armed).toEqual({ kind: 'negative-value', contract: busiest, times: 2 });
      expect((await control('corrupt')).body.armed).toEqual({ kind: 'negative-value', contract: busiest, times: 2 });
      expect((await control('corrupt', { kind: 'none' })).body.armed).toBeNull();
      await control('corrupt', { kind: 'html-200' });
      expect((await control('corrupt/clear', {})).body.armed).toBeNull();
      // cleared: a page comes back whole
      const res = await fetch(`${devnet.base}/builder/getTokenTransfers?contractAddress=${busiest}&pageSize=5`);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(((await res.json()) as { count: number }).count).toBe(5);
    });

  for (const c of CASES_OF[source]) {
    it(`${c.kind}: ${c.outcome === 'failed' ? 'fails the run naming contract, block and field' : 'is tolerated'}; nothing committed is lost, no bad row is stored`, async () => {
      const removedBefore = await rowsRemoved();
      const statsBefore = (await devnet.stats()).errors[`corrupt:${c.kind}`] ?? 0;
      let forgotten: string[] = [];
      if (c.forgetHeaders) {
        const gone = await sql<{ hash: string }>`DELETE FROM block_headers WHERE number >= ${forgetFrom} RETURNING hash`.execute(target.warehouse.db);
        forgotten = gone.rows.map((r) => r.hash);
        expect(forgotten.length).toBeGreaterThan(0);
      }
      const armed = await control('corrupt', { kind: c.kind, ...(!c.forgetHeaders && { contract: busiest }), times: 1 });
      expect(armed.status).toBe(200);

      const log = captureLogger();
      const rssBefore = process.memoryUsage().rss;
      let rssPeak = rssBefore;
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 10);
      let error: Error | undefined;
      try {
        await runExport(target.url, devnet.base, followHead(), log.logger);
      } catch (err) {
        error = err as Error;
      } finally {
        clearInterval(sampler);
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      }
      const { served: servedList } = (await control('corrupt/clear', {})).body;

      // the corruption was served exactly once, and counted
      const served = servedList.filter((s) => s.kind === c.kind).at(-1);
      expect(served, `the server never served ${c.kind}`).toBeDefined();
      expect((await devnet.stats()).errors[`corrupt:${c.kind}`]).toBe(statsBefore + 1);
      const facts: Served = { contract: served!.contract ?? busiest, block: served!.block ?? -1, log: served!.log ?? -1, field: served!.field };
      if (!c.forgetHeaders) expect(facts.contract).toBe(busiest);

      const run = await lastRun();
      let message: string;
      if (c.outcome === 'failed') {
        expect(error, `${c.kind} was accepted`).toBeDefined();
        expect(error!.message).toMatch(c.says(facts));
        expect(run.status).toBe('failed');
        expect(run.error).toMatch(c.says(facts));
        message = error!.message;
      } else {
        expect(error).toBeUndefined();
        expect(run.status).toBe('succeeded');
        expect(log.text()).toMatch(c.says(facts));
        message = c.says(facts).exec(log.text())![0];
      }

      // every row committed before is still there and unchanged; no row of the bad data was stored
      const after = await compareWithTruth();
      expect(after.rows).toEqual(truth);
      expect(await rowsRewritten()).toBe(0);
      expect(await rowsRemoved()).toBe(removedBefore);
      if (c.kind === 'huge-body' || c.kind === 'logs-huge-body') {
        // a getTokenTransfers page has no smaller query; an eth_getLogs answer has: fewer blocks
        if (c.kind === 'huge-body') expect(error?.name).toBe('ResponseTooLargeError');
        expect(rssPeak - rssBefore).toBeLessThan(100 * 1024 * 1024);
      }
      if (c.forgetHeaders) {
        // the bad header was not stored
        const stored = await target.warehouse.db.selectFrom('block_headers').select('number').where('number', '=', String(facts.block)).execute();
        expect(stored).toEqual([]);
      }

      // with the API sane again, the next run finishes what the failed one left open, and changes nothing
      let runs = 1;
      if (c.outcome === 'failed') {
        await runExport(target.url, devnet.base, followHead());
        runs++;
        expect((await lastRun()).status).toBe('succeeded');
      }
      const recovered = await compareWithTruth();
      expect(recovered.rows).toEqual(truth);
      expect(await rowsRewritten()).toBe(0);
      expect(await rowsRemoved()).toBe(removedBefore);
      if (c.forgetHeaders) {
        const headers = await target.warehouse.db.selectFrom('block_headers').select(['hash', 'number', 'hash_verified']).where('hash', 'in', forgotten).execute();
        expect(headers.map((h) => h.hash).sort()).toEqual([...forgotten].sort());
        expect(headers.every((h) => h.hash_verified)).toBe(true);
        const numbers = new Map(dataset.headers.map((h) => [h.hash, String(BigInt(h.number!))]));
        for (const h of headers) expect(String(h.number)).toBe(numbers.get(h.hash));
      }
      figures.push({
        kind: c.kind,
        outcome: c.outcome,
        message,
        rowsLost: recovered.lost + after.lost,
        rowsExtra: recovered.extra + after.extra,
        rowsChanged: recovered.changed + after.changed,
        runs,
        ...((c.kind === 'huge-body' || c.kind === 'logs-huge-body') && { rssGrowthMb: Math.round((rssPeak - rssBefore) / 1024 / 1024) }),
      });
    });
  }

  it(`tries every kind the reference server can serve a ${source} job`, () => {
    expect(CASES_OF[source].map((c) => c.kind).sort()).toEqual([...KINDS_OF[source]].sort());
  });
});

/**
 * A builder page with a transfer moved into another of its blocks (`wrong-block`): every check of the page passes
 * it, so it is committed with its page; the header's logsBloom of the block it was put in rules it out once that
 * header is there. Kept apart from the cases above, where no bad row is ever stored: this one is stored as served
 * until the contract's blocks are read again.
 */
describe('builder jobs: a transfer its block’s logsBloom rules out (wrong-block)', () => {
  let dataset: Dataset;
  let devnet: RunningDevnet;
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  let truth: TransferRecord[];
  let busiest: string;
  /** What the first failure named: the transfer as the truth has it, and the block the API put it in. */
  let named: { transfer: TransferRecord; block: number; hash: string; says: RegExp } | undefined;

  beforeAll(async () => {
    dataset = generateSyntheticDataset(OPTIONS);
    devnet = await startDevnet(dataset);
    target = await migratedWarehouse('bad_data_wrong_block');
    truth = datasetTransfers(dataset);
    const counts = new Map<string, number>();
    for (const t of dataset.transfers) counts.set(t.contractAddress, (counts.get(t.contractAddress) ?? 0) + 1);
    busiest = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
  });
  afterAll(async () => {
    await target?.drop();
    await devnet?.close();
  });

  const followHead = () =>
    job(
      'wrong-block',
      [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort().map((address) => ({ address, fromBlock: OPTIONS.startBlock })),
      { pageSize: 200, concurrency: 2, finality: 1000 },
    );
  const control = async (path: 'corrupt' | 'corrupt/clear', body: unknown) =>
    (await (await fetch(`${devnet.origin}/__control/${path}`, { method: 'POST', body: JSON.stringify(body) })).json()) as { served: ServedCorruption[] };
  const failure = async (config: JobConfig): Promise<Error | undefined> => {
    try {
      await runExport(target.url, devnet.base, config);
      return undefined;
    } catch (err) {
      return err as Error;
    }
  };
  const lastRun = () => target.warehouse.db.selectFrom('export_runs').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
  const rowsRemoved = async () => (await target.warehouse.db.selectFrom('token_transfers_removed').select('id').execute()).length;
  const headerStored = async (hash: string) => (await target.warehouse.db.selectFrom('block_headers').select('hash').where('hash', '=', hash).execute()).length > 0;
  /** The warehouse against the truth, by key: rows lost, rows extra, and the stored rows that differ from it. */
  const compare = async () => {
    const rows = await warehouseTransfers(target.warehouse);
    const wanted = new Map(truth.map((t) => [key(t), t]));
    const stored = new Set(rows.map(key));
    return {
      lost: truth.filter((t) => !stored.has(key(t))).length,
      extra: rows.filter((t) => !wanted.has(key(t))).length,
      changed: rows.filter((t) => wanted.has(key(t)) && JSON.stringify(t) !== JSON.stringify(wanted.get(key(t)))),
    };
  };
  /** The one stored row that differs from the truth: the named transfer, in the block the API put it in. */
  const asServed = () => {
    const { transfer, block, hash } = named!;
    const time = truth.find((t) => t.blockHash === hash)!.blockTimestamp;
    return [{ ...transfer, blockNumber: block, blockHash: hash, blockTimestamp: time }];
  };

  it('exports the chain cleanly first', async () => {
    await runExport(target.url, devnet.base, followHead());
    expect(await warehouseTransfers(target.warehouse)).toEqual(truth);
  });

  it('fails the run naming the transfer, its contract, the block it was put in and what the bloom rules out; no row is lost', async () => {
    await control('corrupt', { kind: 'wrong-block', contract: busiest, times: 1 });
    const error = await failure(followHead());
    const served = (await control('corrupt/clear', {})).served.filter((s) => s.kind === 'wrong-block');
    expect(served).toHaveLength(1);
    const block = served[0]!.block!;
    expect(error?.name).toBe('ChainDataError');
    const says = new RegExp(
      `transaction (0x[0-9a-f]{64}), log (\\d+), contract ${busiest}, block ${block} \\((0x[0-9a-f]{64})\\): ` +
        `the block header's logsBloom rules out its (from|to) topic \\(address (0x[0-9a-f]{40})\\)`,
    );
    const [, tx, log, hash, which, address] = says.exec(error!.message) ?? [];
    const transfer = truth.find((t) => t.transactionHash === tx && t.logIndex === Number(log))!;
    expect(transfer, error!.message).toBeDefined();
    expect(transfer.contractAddress).toBe(busiest);
    expect(transfer.blockNumber).not.toBe(block);
    expect(address).toBe(which === 'from' ? transfer.fromAddress : transfer.toAddress);
    expect(hash).toBe(dataset.headers.find((h) => Number(BigInt(h.number!)) === block)!.hash);
    expect(error!.message).toContain(`re-read the contract over block ${block} and the block the transaction is really in (\`erc20-etl backfill --contract ${busiest}`);
    const run = await lastRun();
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(says);
    named = { transfer, block, hash: hash!, says: new RegExp(says.source.replace('(0x[0-9a-f]{64}), log (\\d+)', `${tx}, log ${log}`)) };

    // every row is there: the named one as served, every other as the truth has it; nothing moved out
    const after = await compare();
    expect({ lost: after.lost, extra: after.extra }).toEqual({ lost: 0, extra: 0 });
    expect(after.changed).toEqual(asServed());
    expect(await rowsRemoved()).toBe(0);
  });

  it('the next run reads the block again and puts the row back in its block: nothing lost, the header stored', async () => {
    const { hash } = named!;
    // the job follows the head with a finality over the whole chain: its blocks are read again
    const fixed = await runExport(target.url, devnet.base, followHead());
    expect(fixed.totals.rowsUpdated).toBe(1);
    expect((await lastRun()).status).toBe('succeeded');
    expect(await warehouseTransfers(target.warehouse)).toEqual(truth);
    expect(await headerStored(hash)).toBe(true);
    expect(await rowsRemoved()).toBe(0);
  });

  it('recovers as the message says: the contract re-read over both blocks, then the job runs to its end; nothing lost', async () => {
    await control('corrupt', { kind: 'wrong-block', contract: busiest, times: 1 });
    const error = await failure(followHead());
    // the list holds what was served since the server started: the first case's, then this one
    const served = (await control('corrupt/clear', {})).served.filter((s) => s.kind === 'wrong-block');
    expect(served).toHaveLength(2);
    const [, tx, log] = /transaction (0x[0-9a-f]{64}), log (\d+)/.exec(error?.message ?? '') ?? [];
    const transfer = truth.find((t) => t.transactionHash === tx && t.logIndex === Number(log))!;
    expect(transfer, error?.message).toBeDefined();
    const block = served[1]!.block!;
    const backfill = backfillJob({ contract: [busiest], from: String(Math.min(block, transfer.blockNumber)), to: String(Math.max(block, transfer.blockNumber)) });
    const fixed = await runExport(target.url, devnet.base, backfill);
    // the row is replaced: back in its block
    expect(fixed.totals.rowsUpdated).toBe(1);
    await runExport(target.url, devnet.base, followHead());
    expect((await lastRun()).status).toBe('succeeded');
    expect(await warehouseTransfers(target.warehouse)).toEqual(truth);
    expect(await rowsRemoved()).toBe(0);
    const headers = await target.warehouse.db.selectFrom('block_headers').select('hash').execute();
    expect(new Set(headers.map((h) => h.hash))).toEqual(new Set(truth.map((t) => t.blockHash)));
  });

  it('tries every kind of moved transfer the reference server can serve a builder job', () => {
    expect([...BLOCK_CORRUPTIONS]).toEqual(['wrong-block']);
  });
});
