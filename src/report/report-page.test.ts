import { describe, expect, it } from 'vitest';
import type { ReportData } from './report-data.ts';
import { reportPage } from './report-page.ts';
import { tokenLabels } from './token-labels.ts';

const A = '0xa12a0f0a6fc3ef215e6e27ec907094eb03562f0c';
const B = '0x90e585df1f5e7288584ff29d6cf76cc5094c147c';

/** A report of two contracts of chain 8453 with one symbol, and one of chain 1, named as `readReportData` names them. */
function twoWithOneSymbol(): ReportData {
  const day = (chainId: string, contract: string, transfers: number) => ({
    chainId,
    contract,
    token: 'SUSD',
    day: '2023-08-26',
    transfers,
    volume: String(transfers),
    volumePlot: transfers,
  });
  const daily = [day('8453', A, 1314), day('8453', B, 2485), day('1', A, 7)];
  const coverage = [
    { chainId: '8453', contract: A, token: 'SUSD', fromBlock: 100, toBlock: 200 },
    { chainId: '8453', contract: B, token: 'SUSD', fromBlock: 150, toBlock: 300 },
    { chainId: '1', contract: A, token: 'SUSD', fromBlock: 1, toBlock: 9 },
  ];
  const name = tokenLabels([...daily, ...coverage]);
  return {
    generatedAt: '2023-08-27T00:00:00.000Z',
    days: 1,
    daily: daily.map((d) => ({ ...d, token: name(d) })),
    coverage: coverage.map((c) => ({ ...c, token: name(c) })),
    runs: [],
  };
}

describe('reportPage', () => {
  it('draws a series and a volume chart per contract when two contracts of a chain share a symbol', () => {
    const page = reportPage(twoWithOneSymbol());
    // each volume chart: its caption and the values of its points
    const volumeCharts = page
      .split('<figcaption>Volume per day: ')
      .slice(1)
      .map((chart) => [chart.slice(0, chart.indexOf('<')), ...[...chart.matchAll(/data-value="(\d+)"/g)].map((m) => m[1])]);
    expect(volumeCharts).toEqual([
      ['SUSD (chain 1)', '7'],
      [`SUSD ${B} (chain 8453)`, '2485'],
      [`SUSD ${A} (chain 8453)`, '1314'],
    ]);
    // the transfers chart: a series per contract
    expect(new Set([...page.matchAll(/data-series="([^"]*)"/g)].map((m) => m[1])).size).toBe(3);
  });

  it('names the chain in the title of the one coverage chart when the names carry chains, as its rows leave it out', () => {
    const data = twoWithOneSymbol();
    const page = reportPage({ ...data, coverage: data.coverage.filter((c) => c.chainId === '8453') });
    expect(page).toContain('<figcaption>Blocks covered on chain 8453 (completed ranges)</figcaption>');
    expect([...page.matchAll(/<text data-label[^>]*>([^<]*)</g)].map((m) => m[1])).toEqual(['SUSD 0xa12a…2f0c', 'SUSD 0x90e5…147c']);
  });

  it('says "the last day", not "the last 1 days"', () => {
    expect(reportPage(twoWithOneSymbol())).toContain('transfers of the last day of data.');
    expect(reportPage({ ...twoWithOneSymbol(), days: 90 })).toContain('transfers of the last 90 days of data.');
  });

  it("names a per-chain coverage chart's rows without their chain, each contract on a row of its own", () => {
    const page = reportPage(twoWithOneSymbol());
    const rows = [...page.matchAll(/<text data-label[^>]*>([^<]*)</g)].map((m) => m[1]);
    expect(rows).toEqual(['SUSD 0xa12a…2f0c', 'SUSD 0x90e5…147c', 'SUSD']);
  });
});
