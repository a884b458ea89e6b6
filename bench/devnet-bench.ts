import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Pool } from 'undici';
import { BIN } from './devnet-process.ts';
import { processMemoryMb } from './process-memory.ts';

const PROJECT = 'bench';

export interface DevnetBenchOptions {
  transfers: number;
  blocks: number;
  tokens: number;
  /** Concurrent page streams (each a contract × block-range slice). */
  streams: number;
}

export interface DevnetBenchResult {
  transfers: number;
  startupSeconds: number;
  transfersPerSecond: number;
  pages: number;
  headerLookupsPerSecondBatched: number;
  headerLookupsPerSecondSingle: number;
  serverRssMb: number;
  serverPeakRssMb: number;
}

/**
 * Measures the reference server in its own process, as the exporter meets it: transfers served per
 * second in 1000-row pages, header lookups per second (batches of 100, and one call per request), and
 * the server's resident memory.
 */
export async function benchDevnet(o: DevnetBenchOptions): Promise<DevnetBenchResult> {
  const started = performance.now();
  const args = ['devnet', '--port', '0', '--project-id', PROJECT, '--seed', '1'];
  args.push('--blocks', String(o.blocks), '--tokens', String(o.tokens), '--transfers', String(o.transfers));
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  while (!/listening on (http:\/\/\S+:\d+)/.test(out)) {
    if (child.exitCode !== null) throw new Error(`devnet exited: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const origin = /listening on (http:\/\/\S+:\d+)/.exec(out)![1]!;
  const startupSeconds = (performance.now() - started) / 1000;
  const pool = new Pool(origin, { connections: 2 * o.streams, pipelining: 1 });
  try {
    // the bench measures the server: the client reads every byte but decodes and parses only the page's head
    // (count, nextPageKey), which the server writes before the rows: decoding each page's 400 KB as text, the client
    // on the same two cores looked to be much of what the figure measured (204,382 transfers/s against 299,570 reading
    // bytes, with the same server, one run each; bench/NOTES.md, "A twenty-second day")
    const getPageHead = async (path: string) => {
      const res = await pool.request({ method: 'GET', path });
      const bytes = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${bytes.toString('utf8', 0, 200)}`);
      const cut = bytes.indexOf(',"tokenTransfers":');
      if (cut < 0) throw new Error(`no "tokenTransfers" in a page: ${bytes.toString('utf8', 0, 200)}`);
      return JSON.parse(`${bytes.toString('utf8', 0, cut)}}`) as { count: number; nextPageKey?: string };
    };
    const post = async (body: unknown) => {
      const res = await pool.request({
        method: 'POST',
        path: `/${PROJECT}`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await res.body.json()) as any;
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${JSON.stringify(json)}`);
      return json;
    };

    const contracts = ((await (await fetch(`${origin}/__contracts`)).json()) as { contractAddress: string }[]).map((c) => c.contractAddress);
    const head = Number.parseInt((await post({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' })).result, 16);
    const first = head - o.blocks + 1;

    // transfers: streams over (contract × slice of the block range), 1000-row pages
    const slices = Math.max(1, Math.ceil(o.streams / contracts.length));
    const jobs: { contract: string; from: number; to: number }[] = [];
    const span = Math.ceil(o.blocks / slices);
    for (const contract of contracts) {
      for (let s = 0; s < slices; s++) jobs.push({ contract, from: first + s * span, to: Math.min(head, first + (s + 1) * span - 1) });
    }
    let rows = 0;
    let pages = 0;
    const t0 = performance.now();
    await runAll(jobs, o.streams, async (job) => {
      let key: string | undefined;
      do {
        const q = `contractAddress=${job.contract}&fromBlock=${job.from}&toBlock=${job.to}&pageSize=1000${key ? `&pageKey=${encodeURIComponent(key)}` : ''}`;
        const page = await getPageHead(`/${PROJECT}/builder/getTokenTransfers?${q}`);
        rows += page.count as number;
        pages++;
        key = page.nextPageKey as string | undefined;
      } while (key);
    });
    const transfersSeconds = (performance.now() - t0) / 1000;
    if (rows !== o.transfers) throw new Error(`served ${rows} transfers, expected ${o.transfers}`);

    // headers: every block by number to learn hashes, then by hash
    const numbers = Array.from({ length: Math.min(o.blocks, 20_000) }, (_, i) => first + i);
    const hashes: string[] = [];
    const t1 = performance.now();
    const batches: number[][] = [];
    for (let i = 0; i < numbers.length; i += 100) batches.push(numbers.slice(i, i + 100));
    await runAll(batches, o.streams, async (batch) => {
      const answers = (await post(batch.map((n, id) => ({ jsonrpc: '2.0', id, method: 'erigon_getHeaderByNumber', params: [`0x${n.toString(16)}`] })))) as {
        result: { hash: string };
      }[];
      for (const a of answers) hashes.push(a.result.hash);
    });
    const batchedSeconds = (performance.now() - t1) / 1000;
    const single = hashes.slice(0, 5000);
    const t2 = performance.now();
    await runAll(single, 2 * o.streams, async (hash) => {
      const answer = await post({ jsonrpc: '2.0', id: 1, method: 'erigon_getHeaderByHash', params: [hash] });
      if (answer.result?.hash !== hash) throw new Error(`wrong header for ${hash}`);
    });
    const singleSeconds = (performance.now() - t2) / 1000;

    const memory = processMemoryMb(child.pid!);
    return {
      transfers: rows,
      startupSeconds,
      transfersPerSecond: rows / transfersSeconds,
      pages,
      headerLookupsPerSecondBatched: numbers.length / batchedSeconds,
      headerLookupsPerSecondSingle: single.length / singleSeconds,
      serverRssMb: memory.rssMb,
      serverPeakRssMb: memory.peakRssMb,
    };
  } finally {
    await pool.close();
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

async function runAll<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}
