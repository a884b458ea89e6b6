import { describe, expect, it } from 'vitest';
import { reportPage } from './report-page.ts';
import { barChart, escapeHtml, lineChart, shortName, spanChart } from './svg.ts';

const count = (svg: string) => (svg.match(/data-point/g) ?? []).length;

describe('report charts', () => {
  it('escapes text for HTML', () => {
    expect(escapeHtml(`<b a="1">Tom's & co</b>`)).toBe('&lt;b a=&quot;1&quot;&gt;Tom&#39;s &amp; co&lt;/b&gt;');
  });

  it('draws a point per value, on shared days, with its exact text', () => {
    const svg = lineChart('Volume', 'volume', [
      {
        name: 'A<script>',
        points: [
          { x: '2024-01-02', y: 2, text: '2.000000' },
          { x: '2024-01-01', y: 1, text: '1.5' },
        ],
      },
      { name: 'B', points: [{ x: '2024-01-01', y: 4, text: '115792089237316195423570985008687907853269984665640564039457584007913129639935' }] },
    ]);
    expect(count(svg)).toBe(3);
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('data-series="A&lt;script&gt;"');
    expect(svg).toContain('data-value="115792089237316195423570985008687907853269984665640564039457584007913129639935"');
    // the highest value is at the top of the plot, a lower one below it
    const cy = (value: string) => Number(new RegExp(`data-value="${value}" cx="[\\d.]+" cy="([\\d.]+)"`).exec(svg)![1]);
    expect(cy('2.000000')).toBeGreaterThan(cy('115792089237316195423570985008687907853269984665640564039457584007913129639935'));
  });

  it('keeps every legend entry inside the chart: seven tokens go on in a second row, and the chart grows to hold it', () => {
    const names = ['SYN0', 'SYN1', 'Synthetic Token Two', 'SYN3', 'ÉSYN (chain 8453)', 'SYN5', '0xa12a0f0a6fc3ef215e6e27ec907094eb03562f0c (chain 1)'];
    const svg = lineChart(
      'Transfers',
      'transfers',
      names.map((name) => ({ name, points: [{ x: '2024-01-01', y: 1, text: '1' }] })),
    );
    const [, width, height] = /viewBox="0 0 (\d+) (\d+)"/.exec(svg)!.map(Number);
    const entries = [...svg.matchAll(/<text data-legend x="([\d.]+)" y="([\d.]+)" font-size="11">([^<]*)<\/text>/g)].map((m) => ({
      x: Number(m[1]),
      y: Number(m[2]),
      text: m[3]!,
    }));
    expect(entries.map((e) => e.text)).toEqual(['SYN0', 'SYN1', 'Synthetic Token Two', 'SYN3', 'ÉSYN (chain 8453)', 'SYN5', '0xa12a…2f0c (chain 1)']);
    for (const e of entries) {
      expect(e.x + e.text.length * 7).toBeLessThanOrEqual(width!);
      expect(e.y).toBeLessThan(height!);
    }
    expect(new Set(entries.map((e) => e.y)).size).toBe(2);
    expect(height).toBe(240 + 16);
  });

  it('shortens addresses in a name and cuts what is still too long, keeping a token and its chain whole', () => {
    expect(shortName('SUSD (chain 8453)')).toBe('SUSD (chain 8453)');
    expect(shortName('0xa12a0f0a6fc3ef215e6e27ec907094eb03562f0c')).toBe('0xa12a…2f0c');
    expect(shortName('A token with a very long name indeed')).toBe('A token with a very l…');
    expect(shortName('A token with a very long name indeed', 28)).toHaveLength(28);
    // what tells two tokens apart stays: the chain, and the address where two contracts share a symbol
    expect(shortName('Synthetic USD 0xa12a0f0a6fc3ef215e6e27ec907094eb03562f0c (chain 8453)', 28)).toBe('Sy… 0xa12a…2f0c (chain 8453)');
    expect(shortName('Synthetic USD (chain 137)', 21)).toBe('Syntheti… (chain 137)');
    expect(shortName('Synthetic USD 0xa12a0f0a6fc3ef215e6e27ec907094eb03562f0c', 21)).toBe('Syntheti… 0xa12a…2f0c');
  });

  it('draws bars and spans', () => {
    expect(
      count(
        barChart('Runs', 'rows', {
          name: 'rows',
          points: [
            { x: '#1', y: 0, text: '0' },
            { x: '#2', y: 5, text: '5' },
          ],
        }),
      ),
    ).toBe(2);
    const spans = spanChart('Coverage', [
      { row: 'USDC', from: 10, to: 20, text: 'a' },
      { row: 'USDC', from: 30, to: 40, text: 'b' },
      { row: 'WETH', from: 10, to: 10, text: 'c' },
    ]);
    expect(count(spans)).toBe(3);
  });

  it('labels an axis of whole numbers when every value is 0', () => {
    const zeros = {
      name: 'rows',
      points: [
        { x: '#1', y: 0, text: '0' },
        { x: '#2', y: 0, text: '0' },
      ],
    };
    for (const svg of [barChart('Runs', 'rows', zeros), lineChart('Volume', 'tokens', [zeros])]) {
      const labels = [...svg.matchAll(/text-anchor="end" font-size="11">([^<]*)</g)].map((m) => m[1]).slice(0, 5);
      expect(labels).toEqual(['0', '1', '2', '3', '4']);
      expect(svg).not.toMatch(/e-1\d/);
      // the bars sit on the axis: no height, no NaN
      expect(svg).not.toContain('NaN');
    }
  });

  it('says so where there is nothing to chart yet', () => {
    const page = reportPage({ generatedAt: '2026-01-01T00:00:00.000Z', days: 90, daily: [], coverage: [], runs: [] });
    expect(count(page)).toBe(0);
    expect(page).toContain('No transfers in the warehouse yet.');
    expect(page).toContain('No range has been completed yet.');
    expect(page).toContain('No run yet.');
  });
});
