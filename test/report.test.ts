import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { readReportData } from '../src/report/report-data.ts';
import { lineChart, spanChart } from '../src/report/svg.ts';
import { runCli } from './helpers/cli.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { job, migratedWarehouse, runExport } from './helpers/exporter.ts';

// about four days of blocks, so the daily charts have several points per token
const OPTIONS = { seed: 43, blocks: 30_000, tokens: 3, transfers: 3000, startBlock: 6_000_000 };
const LAST = OPTIONS.startBlock + OPTIONS.blocks - 1;
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** `sum × 10^−decimals` as PostgreSQL prints a numeric of that scale. */
function scaled(sum: bigint, decimals: number | null): string {
  if (decimals === null || decimals === 0) return sum.toString();
  const digits = sum.toString().padStart(decimals + 1, '0');
  return `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

describe('the HTML report', () => {
  let dataset: Dataset;
  let devnet: RunningDevnet;
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  let dir: string;
  let browser: Browser;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`No Chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium), or set CHROMIUM_PATH.`);
    }
    dataset = generateSyntheticDataset(OPTIONS);
    devnet = await startDevnet(dataset);
    target = await migratedWarehouse('report');
    dir = await mkdtemp(join(tmpdir(), 'erc20-etl-report-'));
    // running as root needs --no-sandbox
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    await target?.drop();
    await devnet?.close();
  });

  it('lays out seven long token names in Chromium with every legend entry inside its chart and no row name over the bars', async () => {
    const names = [
      'Synthetic Token Zero',
      'Synthetic Token One',
      'Wrapped Ether (chain 8453)',
      'ÉSYN',
      'USD Coin (chain 10)',
      'A token with a very long name indeed',
      '0xa12a0f0a6fc3ef215e6e27ec907094eb03562f0c (chain 1)',
    ];
    const chart = lineChart(
      'Transfers per day (UTC)',
      'transfers',
      names.map((name) => ({ name, points: [{ x: '2024-01-01', y: 1, text: '1' }] })),
    );
    const spans = spanChart(
      'Blocks covered',
      names.map((row, i) => ({ row, from: 100 * i, to: 100 * i + 50, text: 'blocks' })),
    );
    const page = await browser.newPage();
    await page.setContent(`<!doctype html><meta charset="utf-8"><body style="font: 14px/1.4 system-ui, sans-serif">${chart}${spans}</body>`);
    const boxes = await page.locator('svg').evaluateAll((svgs) =>
      svgs.flatMap((svg) =>
        [...svg.querySelectorAll('text[data-legend], text[data-label]')].map((t) => {
          const box = (t as unknown as { getBBox(): { x: number; y: number; width: number; height: number } }).getBBox();
          const view = (svg as unknown as { viewBox: { baseVal: { width: number; height: number } } }).viewBox.baseVal;
          return { text: t.textContent, legend: t.hasAttribute('data-legend'), right: box.x + box.width, bottom: box.y + box.height, width: view.width, height: view.height };
        }),
      ),
    );
    await page.close();
    expect(boxes.filter((b) => b.legend)).toHaveLength(7);
    expect(boxes.filter((b) => b.legend && (b.right > b.width || b.bottom > b.height))).toEqual([]);
    // the bars of the coverage chart start at x = 160
    expect(boxes.filter((b) => !b.legend)).toHaveLength(7);
    expect(boxes.filter((b) => !b.legend && b.right > 160)).toEqual([]);
  });

  it('renders in Chromium with no error, and its charts hold the warehouse’s numbers', async () => {
    const contracts = [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort();
    const config = job(
      'report',
      contracts.map((address) => ({ address, fromBlock: OPTIONS.startBlock, toBlock: LAST })),
      { pageSize: 500 },
    );
    await runExport(target.url, devnet.base, config);
    await runExport(target.url, devnet.base, config); // a second run, unchanged
    const out = join(dir, 'report.html');
    const result = await runCli(['report', '--out', out, '--days', '30'], { env: { DATABASE_URL: target.url } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`wrote ${out}`);
    // self-contained: nothing to fetch
    expect(await readFile(out, 'utf8')).not.toMatch(/<script|<link|src=|href=/);

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (msg) => msg.type() === 'error' && errors.push(msg.text()));
    page.on('requestfailed', (req) => errors.push(`failed: ${req.url()}`));
    const response = await page.goto(pathToFileURL(out).href, { waitUntil: 'load' });
    expect(response?.ok()).toBe(true);
    expect(errors).toEqual([]);
    const figures = page.locator('figure');
    // transfers, a volume chart per token, coverage, runs
    expect(await figures.count()).toBe(3 + contracts.length);
    // every legend entry, as the browser lays out its text, lies inside its chart
    const legends = await page.locator('svg').evaluateAll((svgs) =>
      svgs.flatMap((svg) =>
        [...svg.querySelectorAll('text[data-legend]')].map((t) => {
          const box = (t as unknown as { getBBox(): { x: number; y: number; width: number; height: number } }).getBBox();
          const view = (svg as unknown as { viewBox: { baseVal: { width: number; height: number } } }).viewBox.baseVal;
          return { text: t.textContent, inside: box.x >= 0 && box.x + box.width <= view.width && box.y + box.height <= view.height };
        }),
      ),
    );
    expect(legends.length).toBeGreaterThan(0);
    expect(legends.filter((l) => !l.inside)).toEqual([]);
    const points = (caption: string) =>
      figures
        .filter({ has: page.locator('figcaption', { hasText: caption }) })
        .locator('[data-point]')
        .evaluateAll((els) => els.map((e) => Object.fromEntries(Object.entries((e as unknown as { dataset: Record<string, string> }).dataset))));

    // transfers per token and day: a point each, adding up to every transfer
    const tokens = await target.warehouse.db.selectFrom('tokens').selectAll().execute();
    const label = (address: string) => {
      const k = tokens.find((t) => t.contract_address === address);
      return k?.symbol || k?.name || address;
    };
    const day = (iso: string) => iso.slice(0, 10);
    const expected = new Map<string, { transfers: number; sum: bigint; decimals: number | null }>();
    for (const t of dataset.transfers) {
      const key = `${label(t.contractAddress)}|${day(t.blockTimestamp)}`;
      const e = expected.get(key) ?? { transfers: 0, sum: 0n, decimals: tokens.find((k) => k.contract_address === t.contractAddress)?.decimals ?? null };
      e.transfers++;
      e.sum += BigInt(t.value);
      expected.set(key, e);
    }
    expect(new Set([...expected.keys()].map((k) => k.split('|')[1])).size).toBeGreaterThan(2);
    const daily = await points('Transfers per day');
    expect(daily).toHaveLength(expected.size);
    for (const p of daily) expect(Number(p['value']), `${p['series']} ${p['x']}`).toBe(expected.get(`${p['series']}|${p['x']}`)?.transfers);
    // volume, exact, scaled by each token's decimals
    const volume = await points('Volume per day');
    expect(volume).toHaveLength(expected.size);
    for (const p of volume) {
      const e = expected.get(`${p['series']}|${p['x']}`)!;
      expect(p['value'], `${p['series']} ${p['x']}`).toBe(scaled(e.sum, e.decimals));
    }
    // coverage: one span per contract, the range the job read
    const coverage = await points('Blocks covered');
    expect(coverage.map((c) => [c['row'], Number(c['from']), Number(c['to'])]).sort()).toEqual(contracts.map((c) => [label(c), OPTIONS.startBlock, LAST]).sort());
    // the two runs, each having read every transfer
    const runs = await points('Rows read per run');
    expect(runs.map((r) => r['x'])).toEqual(['#1', '#2']);
    for (const r of runs) expect(r['value']).toMatch(new RegExp(`^${dataset.transfers.length} rows .*succeeded$`));
    await page.close();
  });

  it('asks for --out, and refuses a bad --days, with exit code 2', async () => {
    const missing = await runCli(['report'], { env: { DATABASE_URL: target.url } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--out FILE is required');
    const bad = await runCli(['report', '--out', join(dir, 'x.html'), '--days', '0'], { env: { DATABASE_URL: target.url } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--days: expected a whole number from 1 to 999999, got "0"');
    expect(existsSync(join(dir, 'x.html'))).toBe(false);
  });

  it('keeps contracts that share a symbol apart: a series and a volume chart each, named with their address', async () => {
    // the warehouse the test before filled; its three tokens given one symbol, as a bridged copy or a fake would have
    await target.warehouse.pool.query(`UPDATE tokens SET symbol = 'SUSD'`);
    const contracts = [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort();
    const data = await readReportData(target.warehouse.db, { days: 30, runs: 10, now: new Date() });
    const named = new Map(data.daily.map((d) => [d.contract, d.token]));
    expect([...named.keys()].sort()).toEqual(contracts);
    expect(new Set(named.values()).size).toBe(contracts.length);
    for (const [contract, name] of named) expect(name).toBe(`SUSD ${contract}`);
    const out = join(dir, 'same-symbol.html');
    const result = await runCli(['report', '--out', out, '--days', '30'], { env: { DATABASE_URL: target.url } });
    expect(result.code, result.stderr).toBe(0);
    expect((await readFile(out, 'utf8')).match(/<figcaption>Volume per day: /g)).toHaveLength(contracts.length);
  });
});
