import { describe, expect, it } from 'vitest';
import { emptyTotals } from '../warehouse/runs.ts';
import { skippedLines, summaryText } from './summary.ts';

const run = { runId: '7', job: 'nightly', head: 1000, ranges: [{ contract: '0xaaa', fromBlock: 1, toBlock: 1000, rows: 5, removed: 0 }], totals: emptyTotals(), ms: 1500 };

describe('summaryText', () => {
  it('adds a line per contract with skipped logs, and the eth_getLogs range learned, only when there are any', () => {
    const plain = summaryText(run);
    expect(plain).not.toMatch(/skipped|eth_getLogs/);
    expect(summaryText({ ...run, skippedLogs: new Map([['0xaaa', { erc721: 0, other: 0 }]]) })).toBe(plain);

    const text = summaryText({
      ...run,
      logsRange: 1500,
      skippedLogs: new Map([
        ['0xccc', { erc721: 0, other: 2 }],
        ['0xbbb', { erc721: 12, other: 1 }],
      ]),
    });
    expect(text.split('\n').slice(4)).toEqual([
      '  eth_getLogs: 1500 blocks per call learned, the next run of the job starts there',
      '  skipped: 0xbbb 12 ERC-721 and 1 other-shaped Transfer log(s): not ERC-20 transfers, not stored',
      '  skipped: 0xccc 2 other-shaped Transfer log(s): not ERC-20 transfers, not stored',
      '',
    ]);
  });

  it('says so when the range learned could not be stored', () => {
    expect(summaryText({ ...run, logsRange: 1500, logsRangeKept: false }).split('\n')[4]).toBe(
      '  eth_getLogs: 1500 blocks per call learned, but it could not be stored (a warning in the log says why): the next run of the job starts from the range stored before, else the default',
    );
  });

  it("counts a node source's eth_getLogs calls and the refused ones, saying how many went unanswered in time", () => {
    const line = (logsCalls: { calls: number; refused: number; timedOut: number }, logsRange?: number) =>
      summaryText({ ...run, logsCalls, ...(logsRange !== undefined && { logsRange }) }).split('\n')[4];
    expect(line({ calls: 158, refused: 0, timedOut: 0 }, 1500)).toBe('  eth_getLogs: 158 calls, none refused; 1500 blocks per call learned, the next run of the job starts there');
    expect(line({ calls: 158, refused: 3, timedOut: 1 }, 1500)).toBe(
      '  eth_getLogs: 158 calls, 3 refused (1 unanswered within --rpc-timeout) and asked again in smaller calls; 1500 blocks per call learned, the next run of the job starts there',
    );
    expect(summaryText({ ...run, logsCalls: { calls: 186, refused: 0, timedOut: 0 }, logsRange: 283, logsBlockLimit: 307 }).split('\n')[4]).toBe(
      '  eth_getLogs: 186 calls, none refused; 283 blocks per call learned, the next run of the job starts there and stays under the 307-block span the node refused as too wide (asked again every 100 answers, counted across runs)',
    );
    expect(line({ calls: 9, refused: 2, timedOut: 2 })).toBe('  eth_getLogs: 9 calls, 2 refused (all unanswered within --rpc-timeout) and asked again in smaller calls');
    expect(line({ calls: 1, refused: 1, timedOut: 1 })).toBe('  eth_getLogs: 1 call, 1 refused (unanswered within --rpc-timeout) and asked again in smaller calls');
    expect(summaryText({ ...run, logsCalls: { calls: 2, refused: 0, timedOut: 0 }, logsRange: 9, logsRangeKept: false }).split('\n')[4]).toMatch(
      /^ {2}eth_getLogs: 2 calls, none refused; 9 blocks per call learned, but it could not be stored/,
    );
  });

  it('has no skipped lines for none', () => {
    expect(skippedLines(undefined)).toEqual([]);
    expect(skippedLines(new Map())).toEqual([]);
  });
});
