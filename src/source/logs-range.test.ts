import { describe, expect, it } from 'vitest';
import { afterAnswer, afterRefusal, LOGS_RANGE, type LogsRangeState, learnedRange, mayStretch, nextSpan, type RangeDecision, seedRange, startLogsRange } from './logs-range.ts';
import { type LogsRefusal, parseLogsRefusal, timeoutRefusal } from './provider-errors.ts';

const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const USDT = '0xdac17f958d2ee523a2206206994597c13d831ec7';
const ONE = [USDC];
const TWO = [USDC, USDT];

const refusal = (code: number, message: string): LogsRefusal => parseLogsRefusal({ code, message })!;
const hex = (n: number) => `0x${n.toString(16)}`;

/** The decision after `state`'s full range from `from` was refused. */
function refuse(state: LogsRangeState, r: LogsRefusal, from = 1_000_000, contracts = ONE): RangeDecision {
  return afterRefusal(state, { ...nextSpan(state, from, Number.MAX_SAFE_INTEGER), contracts }, r);
}

function retried(decision: RangeDecision): Extract<RangeDecision, { action: 'retry' }> {
  if (decision.action !== 'retry') throw new Error(`expected a retry, got ${decision.action}`);
  return decision;
}

/** `n` answers of full range, at `density` logs a block. */
function answer(state: LogsRangeState, n: number, density = 0): LogsRangeState {
  let s = state;
  for (let i = 0; i < n; i++) s = afterAnswer(s, nextSpan(s, 1_000_000, Number.MAX_SAFE_INTEGER), Math.round(s.range * density));
  return s;
}

describe('starting', () => {
  it('starts from the job’s logsRange, else the learned range, else 2,000 blocks', () => {
    expect(startLogsRange({ jobRange: 500, learned: 1500 }).range).toBe(500);
    expect(startLogsRange({ learned: 1500 }).range).toBe(1500);
    expect(startLogsRange().range).toBe(2000);
    expect(startLogsRange({ jobRange: 1_000_000 }).range).toBe(100_000);
    expect(() => startLogsRange({ jobRange: 0 })).toThrow(RangeError);
  });

  it('asks the range from the first block, and not past the last', () => {
    const state = startLogsRange();
    expect(nextSpan(state, 100, 50_000)).toEqual({ fromBlock: 100, toBlock: 2099 });
    expect(nextSpan(state, 49_990, 50_000)).toEqual({ fromBlock: 49_990, toBlock: 50_000 });
  });
});

describe('after a refusal', () => {
  it('follows Infura’s suggested range', () => {
    const state = startLogsRange();
    const r = refusal(-32005, `query returned more than 10000 results. Try with this block range [${hex(1_000_000)}, ${hex(1_000_599)}].`);
    const d = retried(refuse(state, r));
    expect(d).toMatchObject({ span: { fromBlock: 1_000_000, toBlock: 1_000_599 }, because: 'suggested' });
    expect(d.state).toMatchObject({ range: 600, maxResults: 10_000, ceiling: undefined });
  });

  it('follows Alchemy’s suggested range', () => {
    const message = `Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [${hex(1_000_000)}, ${hex(1_000_099)}]`;
    expect(retried(refuse(startLogsRange(), refusal(-32602, message)))).toMatchObject({ span: { fromBlock: 1_000_000, toBlock: 1_000_099 }, because: 'suggested' });
  });

  it('follows reth’s suggested range when it is smaller than the range asked', () => {
    const r = refusal(-32602, 'query exceeds max results 20000, retry with the range 1000000-1000299');
    expect(retried(refuse(startLogsRange(), r))).toMatchObject({ span: { fromBlock: 1_000_000, toBlock: 1_000_299 }, because: 'suggested', state: { maxResults: 20_000 } });
  });

  it('treats reth’s suggestion equal to the asked range as no hint', () => {
    const r = refusal(-32602, 'query exceeds max results 20000, retry with the range 1000000-1001999');
    expect(retried(refuse(startLogsRange(), r))).toMatchObject({ span: { fromBlock: 1_000_000, toBlock: 1_000_999 }, because: 'halved', state: { range: 1000 } });
  });

  it('treats a suggestion outside the asked range as no hint', () => {
    const r = refusal(-32005, `query returned more than 10000 results. Try with this block range [${hex(999_000)}, ${hex(999_099)}].`);
    expect(retried(refuse(startLogsRange(), r)).because).toBe('halved');
  });

  it('follows Infura’s, QuickNode’s and reth’s block-range limits, and never grows past them', () => {
    const limits: [number, string, number][] = [
      [-32602, 'range 1000000 exceeds limit of 1000', 1000],
      [-32614, 'eth_getLogs is limited to a 1,500 range', 1500],
      [-32602, 'query exceeds max block range 500', 500],
    ];
    for (const [code, message, limit] of limits) {
      const d = retried(refuse(startLogsRange(), refusal(code, message)));
      expect(d, message).toMatchObject({ span: { fromBlock: 1_000_000, toBlock: 1_000_000 + limit - 1 }, because: 'max-range', state: { range: limit, maxRange: limit } });
      expect(answer(d.state, 20).range, message).toBe(limit);
    }
  });

  it('reads a stated limit the asked range does not exceed as one block less, so growth does not ask it again', () => {
    const state = { ...startLogsRange({ jobRange: 10_000 }) };
    const d = retried(refuse(state, refusal(-32614, 'eth_getLogs is limited to a 10,000 range')));
    expect(d).toMatchObject({ because: 'halved', state: { range: 5000, maxRange: 9999 } });
    expect(answer(d.state, 20).range).toBe(9999);
  });

  it('halves when the error gives no hint: Ankr, Arbitrum, the OP stack', () => {
    for (const [code, message] of [
      [-32600, 'block range is too wide'],
      [-32000, 'logs matched by query exceeds limit of 10000'],
      [-32000, 'backend response too large'],
      [-32000, 'Block range is too large'],
    ] as const) {
      expect(retried(refuse(startLogsRange(), refusal(code, message))), message).toMatchObject({ span: { fromBlock: 1_000_000, toBlock: 1_000_999 }, because: 'halved' });
    }
  });

  it('retries a call that got no answer in time with half the range', () => {
    const d = retried(refuse(startLogsRange(), timeoutRefusal(30_000)));
    expect(d).toMatchObject({ span: { fromBlock: 1_000_000, toBlock: 1_000_999 }, because: 'halved', state: { range: 1000, ceiling: 2000 } });
  });

  it('asks per contract when one block overflows', () => {
    const state = startLogsRange({ jobRange: 1 });
    const d = refuse(state, refusal(-32005, 'query returned more than 10000 results. Try with this block range [0xf4240, 0xf4240].'), 1_000_000, TWO);
    expect(d).toMatchObject({ action: 'per-contract', block: 1_000_000, state: { range: 1 } });
  });

  it('fails naming block, contract and the provider’s message when one block of one contract overflows', () => {
    const d = refuse(startLogsRange({ jobRange: 1 }), refusal(-32000, 'logs matched by query exceeds limit of 10000'), 17_000_000, ONE);
    if (d.action !== 'fail') throw new Error(`expected a failure, got ${d.action}`);
    expect(d.error.retryable).toBe(false);
    expect(d.error.message).toContain(`contract ${USDC} in block 17000000, even alone (-32000 "logs matched by query exceeds limit of 10000")`);
    expect(d.error.details).toMatchObject({ block: 17_000_000, contract: USDC, code: -32000, providerMessage: 'logs matched by query exceeds limit of 10000' });
    const hang = refuse(startLogsRange({ jobRange: 1 }), timeoutRefusal(30_000), 17_000_000, ONE);
    expect(hang.action === 'fail' && hang.error.message).toContain(`contract ${USDC} in block 17000000, even alone (no answer within 30 s)`);
  });
});

describe('after an answer', () => {
  it('doubles the range after 2 full answers in a row, up to 100,000 blocks', () => {
    let state = startLogsRange();
    state = answer(state, 1);
    expect(state.range).toBe(2000);
    state = answer(state, 1);
    expect(state.range).toBe(4000);
    expect(answer(state, 100).range).toBe(LOGS_RANGE.maxRange);
  });

  it('does not grow on a short last span of a chunk', () => {
    let state = startLogsRange();
    for (let i = 0; i < 5; i++) state = afterAnswer(state, { fromBlock: 0, toBlock: 99 }, 0);
    expect(state.range).toBe(2000);
  });

  it('shrinks at once when an answer holds more than 70 % of the results cap', () => {
    const state = afterAnswer(startLogsRange(), { fromBlock: 1, toBlock: 2000 }, 15_000);
    expect(state.range).toBe(933);
    expect(learnedRange(state)).toBe(933);
  });

  it('sizes growth by the density of the answers and a stated results cap', () => {
    const capped = retried(refuse(startLogsRange(), refusal(-32000, 'logs matched by query exceeds limit of 400'))).state;
    expect(capped).toMatchObject({ range: 1000, maxResults: 400 });
    // 1 log per 10 blocks: 70 % of 400 logs fit in 2800 blocks
    expect(answer(capped, 2, 0.1).range).toBe(2000);
    expect(answer(capped, 4, 0.1).range).toBe(2800);
    expect(answer(capped, 10, 0.1).range).toBe(2800);
  });

  it('grows past the longest span that answered only as far as the busiest of the last 3 answers allows', () => {
    const at = (state: LogsRangeState, logsPerBlock: number) => afterAnswer(state, { fromBlock: 1, toBlock: state.range }, Math.round(state.range * logsPerBlock));
    // 5 logs a block, then 1: the last answer alone would allow 7,000 blocks, and doubling 2,000; 70 % of 10,000
    // logs at the busier answer's 5 a block fit in 1,400 blocks, past the longest span that answered (1,000)
    let state = at(at({ ...startLogsRange(), range: 1000 }, 5), 1);
    expect(state.range).toBe(1400);
    // the busy answer is 3 answers back now: sized by the quiet ones, doubling
    state = at(at(state, 1), 1);
    expect(state.range).toBe(2800);
    // a busy answer shrinks the range; quiet ones after it bring it back up to the longest span that answered (2,800)
    state = at(state, 5);
    expect(state.range).toBe(1400);
    state = at(at(state, 1), 1);
    expect(state.range).toBe(2800);
  });

  it('probes halfway to a range refused without a number, stops when close, and forgets it after 100 answers', () => {
    const tooWide = refusal(-32600, 'block range is too wide');
    let state = retried(refuse(startLogsRange({ jobRange: 1600 }), tooWide)).state;
    expect(state).toMatchObject({ range: 800, ceiling: 1600, rangeCeiling: undefined });
    // 2 logs a block: the 2,400 logs of the span refused next are no small share of the 5,600 aimed at, so a cap on logs
    state = answer(state, 2, 2);
    expect(state.range).toBe(1200);
    state = retried(refuse(state, tooWide)).state;
    expect(state).toMatchObject({ range: 600, ceiling: 1200, rangeCeiling: undefined });
    const probes = [];
    for (let i = 0; i < 5; i++) {
      state = answer(state, 2, 2);
      probes.push(state.range);
    }
    expect(probes).toEqual([900, 1050, 1125, 1125, 1125]);
    expect(answer(state, 89, 2).range).toBe(1125);
    // the ceiling forgotten: sized by the density (7,000 logs at 2 a block), no ceiling in the way
    expect(answer(state, 200, 2).range).toBe(3500);
  });

  it('reads a refusal naming blocks but no number where few logs would be as a block limit: the target kept, asking the largest span that answered', () => {
    const tooWide = refusal(-32600, 'block range is too wide');
    // no answer yet: nothing tells logs from blocks, so a cap on logs
    let state = retried(refuse(startLogsRange({ jobRange: 2000 }), tooWide)).state;
    expect(state).toMatchObject({ range: 1000, rangeCeiling: undefined, target: 5600 });
    // 0.1 logs a block: 100 logs in 1,000 blocks, then 1,500 refused (150 logs, far under a quarter of the target)
    state = answer(state, 2, 0.1);
    expect(state.range).toBe(1500);
    const d = retried(refuse(state, tooWide));
    expect(d).toMatchObject({ because: 'block-limit', span: { fromBlock: 1_000_000, toBlock: 1_000_999 } });
    state = d.state;
    expect(state).toMatchObject({ range: 1000, rangeCeiling: 1500, ceiling: 2000 });
    expect(state.target).toBeCloseTo(5600 * 1.01 ** 2);
    // growth probes halfway up to it, and stops when close (a step under a sixteenth of the range): the range book asks it again
    const probes = [];
    let probing = state;
    for (let i = 0; i < 6; i++) {
      probing = answer(probing, 2, 0.1);
      probes.push(probing.range);
    }
    expect(probes).toEqual([1250, 1375, 1375, 1375, 1375, 1375]);
    expect(answer(probing, 200, 0.1).range).toBe(1375);
    // refused at the probe of 1,375: back to the largest that answered (1,250), the ceiling lowered
    const again = retried(refuse(answer(state, 4, 0.1), tooWide));
    expect(again).toMatchObject({ because: 'block-limit', state: { range: 1250, rangeCeiling: 1375 } });
    // a set of contracts seeded from it starts without it: the run's (range-book.ts) is laid on it
    expect(seedRange(again.state, 0.001)).toMatchObject({ rangeCeiling: undefined });
  });

  it('does not read a refusal that names no blocks as a block limit, however few logs the span would hold', () => {
    const state = answer(startLogsRange({ jobRange: 1000 }), 2, 0.01);
    for (const message of ['backend response too large', 'query exceeds max results']) {
      const d = retried(refuse(state, refusal(-32000, message)));
      expect(d, message).toMatchObject({ because: 'halved', state: { rangeCeiling: undefined, ceiling: 2000 } });
    }
    expect(retried(refuse(state, refusal(-32000, 'Block range is too large')))).toMatchObject({ because: 'block-limit', state: { rangeCeiling: 2000 } });
  });

  it('does not read a refusal over a span no longer than one that answered in the run as a block limit: a cap on logs', () => {
    const tooWide = refusal(-32600, 'block range is too wide');
    // few logs lately, but a call of the run (of any set) answered over 2,000 blocks: the cap is on logs, far under 10,000
    const state = { ...answer(startLogsRange({ jobRange: 1000 }), 2, 0.01), longestAnswered: 2000 };
    const d = retried(refuse(state, tooWide));
    expect(d).toMatchObject({ because: 'halved', state: { range: 1000, rangeCeiling: undefined, ceiling: 2000 } });
    expect(d.state.target).toBeLessThan(state.target);
  });

  it('aims at fewer logs after each refusal for size, not after a block limit or a timeout, and back up after answers', () => {
    const start = startLogsRange();
    expect(start.target).toBe(7000);
    const cut = retried(refuse(start, refusal(-32000, 'backend response too large'))).state;
    expect(cut.target).toBe(5600);
    expect(retried(refuse(cut, refusal(-32000, 'backend response too large'))).state.target).toBeCloseTo(4480);
    expect(retried(refuse(start, refusal(-32614, 'eth_getLogs is limited to a 1,000 range'))).state.target).toBe(7000);
    expect(retried(refuse(start, timeoutRefusal(30_000))).state.target).toBe(7000);
    expect(retried(refuse(start, refusal(-32005, 'query returned more than 1000 results. Try with this block range [0xf4240, 0xf4250].'))).state.target).toBe(700);
    expect(answer(cut, 10).target).toBeCloseTo(5600 * 1.01 ** 10);
    expect(answer(cut, 100).target).toBe(7000);
  });

  it('stretches a call past its range only within what a call may ask and what the target holds at the busiest logs per block lately', () => {
    const state: LogsRangeState = { ...startLogsRange(), range: 1000, recent: [2, 5, 3] };
    // at 5 logs a block: 1,600 blocks hold 8,000, within 1.15 times the target of 7,000 (8,050); 1,700 hold 8,500
    expect(mayStretch(state, 1600)).toBe(true);
    expect(mayStretch(state, 1700)).toBe(false);
    // the last answer alone (2 a block) would let 1,700 blocks through: the busiest of the last answers decides
    expect(mayStretch({ ...state, recent: [5, 3, 2] }, 1700)).toBe(false);
    // a set no answer of its own has measured: its seeded logs per block, else only what a call may ask
    expect(mayStretch({ ...state, recent: [], seededDensity: 5 }, 1700)).toBe(false);
    expect(mayStretch({ ...state, recent: [] }, 1700)).toBe(true);
    expect(mayStretch({ ...state, recent: [], maxRange: 1100 }, 1200)).toBe(false);
  });

  it('learns for the next run the range the densest stretch allowed, no more than the largest that answered', () => {
    let state = startLogsRange();
    expect(learnedRange(state)).toBeUndefined();
    state = answer(state, 5);
    expect([state.range, learnedRange(state)]).toEqual([8000, 8000]);
    // 3 logs a block: 7,000 logs in 2,333 blocks
    state = answer(state, 3, 3);
    expect([state.range, learnedRange(state)]).toEqual([2333, 2333]);
    state = answer(state, 20);
    expect(state.range).toBe(LOGS_RANGE.maxRange);
    expect(learnedRange(state)).toBe(2333);
  });

  it('learns nothing from answers cut short by the end of a chunk', () => {
    const start = startLogsRange({ learned: 1500 });
    const tail = afterAnswer(start, { fromBlock: 100, toBlock: 103 }, 2);
    expect(tail.largest).toBe(4);
    expect(learnedRange(tail)).toBeUndefined();
    // nor from a single block, whose logs say little of a stretch
    expect(learnedRange(afterAnswer({ ...start, range: 1 }, { fromBlock: 100, toBlock: 100 }, 2))).toBeUndefined();
    expect(learnedRange(afterAnswer(start, { fromBlock: 100, toBlock: 1599 }, 2))).toBe(1500);
  });
});

/** Logs a block: dense (3, with a burst of 400 every 997 blocks), then sparse (1 in 50 blocks), then 1 in 2 blocks. */
const CHAIN = (() => {
  const blocks = 400_000;
  const before = new Float64Array(blocks + 1);
  for (let b = 0; b < blocks; b++) {
    const logs = b < 150_000 ? (b % 997 === 0 ? 400 : 3) : b < 300_000 ? (b % 50 === 0 ? 1 : 0) : b % 2;
    before[b + 1] = before[b]! + logs;
  }
  return { blocks, denseEnd: 150_000, logsIn: (from: number, to: number) => before[to + 1]! - before[from]! };
})();

/** Exports the whole chain through a provider that refuses more than `cap` logs (or `maxRange` blocks) as `style` does. */
function simulate(style: 'infura' | 'alchemy' | 'reth' | 'arbitrum' | 'ankr' | 'quicknode', options: { cap: number; maxRange?: number; learned?: number }) {
  const { blocks, denseEnd, logsIn } = CHAIN;
  let state = startLogsRange({ learned: options.learned });
  let [calls, refused, denseCalls, denseLogs] = [0, 0, 0, 0];
  let from = 0;
  while (from < blocks) {
    const span = nextSpan(state, from, blocks - 1);
    calls++;
    const logs = logsIn(span.fromBlock, span.toBlock);
    const size = span.toBlock - span.fromBlock + 1;
    let error: { code: number; message: string } | undefined;
    if (options.maxRange !== undefined && size > options.maxRange) {
      error = style === 'ankr' ? { code: -32600, message: 'block range is too wide' } : { code: -32614, message: `eth_getLogs is limited to a ${options.maxRange} range` };
    } else if (logs > options.cap) {
      let fit = span.fromBlock;
      while (logsIn(span.fromBlock, fit + 1) <= options.cap) fit++;
      const suggestion = `[${hex(span.fromBlock)}, ${hex(fit)}]`;
      error = {
        infura: { code: -32005, message: `query returned more than ${options.cap} results. Try with this block range ${suggestion}.` },
        alchemy: { code: -32602, message: `Log response size exceeded. … Based on your parameters, this block range should work: ${suggestion}` },
        reth: { code: -32602, message: `query exceeds max results ${options.cap}, retry with the range ${span.fromBlock}-${span.toBlock}` },
        arbitrum: { code: -32000, message: `logs matched by query exceeds limit of ${options.cap}` },
        ankr: { code: -32000, message: 'backend response too large' },
        quicknode: { code: -32000, message: 'backend response too large' },
      }[style];
    }
    if (error) {
      refused++;
      const d = afterRefusal(state, { ...span, contracts: ONE }, parseLogsRefusal(error)!);
      if (d.action !== 'retry') throw new Error(`${style}: ${d.action}`);
      state = d.state;
      continue;
    }
    state = afterAnswer(state, span, logs);
    if (span.toBlock < denseEnd) [denseCalls, denseLogs] = [denseCalls + 1, denseLogs + logs];
    from = span.toBlock + 1;
  }
  return { calls, refused, meanDenseFill: denseLogs / denseCalls / options.cap, learned: learnedRange(state) };
}

describe('against a provider with a results cap', () => {
  for (const style of ['infura', 'alchemy', 'reth', 'arbitrum', 'ankr'] as const) {
    it(`keeps refusals to 10 % of the calls and answers at least half full on dense ranges (${style})`, () => {
      for (const cap of [10_000, 1000]) {
        // at a cap of 1,000 logs the bursts of 400 logs in a block are 40 % of the cap
        const run = simulate(style, { cap, maxRange: style === 'ankr' ? 5000 : undefined });
        expect(run.refused / run.calls, JSON.stringify({ cap, ...run })).toBeLessThanOrEqual(0.1);
        expect(run.meanDenseFill, JSON.stringify({ cap, ...run })).toBeGreaterThanOrEqual(0.5);
      }
    });
  }

  it('is refused at most twice on a second run from the learned range', () => {
    for (const style of ['infura', 'alchemy', 'reth', 'arbitrum'] as const) {
      const first = simulate(style, { cap: 10_000 });
      expect(simulate(style, { cap: 10_000, learned: first.learned }).refused, style).toBeLessThanOrEqual(2);
    }
  });

  it('reaches a QuickNode range limit with one refusal', () => {
    expect(simulate('quicknode', { cap: 1_000_000, maxRange: 10_000 }).refused).toBe(1);
  });
});

describe('for another set of contracts', () => {
  it('sizes the range by the contracts’ logs per block, keeping the provider’s caps and the target', () => {
    const refused = afterRefusal(
      startLogsRange(),
      { fromBlock: 1, toBlock: 2000, contracts: ['0xa'] },
      parseLogsRefusal({ code: -32602, message: 'range 2000 exceeds limit of 1500' })!,
    );
    const known = refused.action === 'retry' ? refused.state : startLogsRange();
    expect(known.maxRange).toBe(1500);
    const seeded = seedRange(known, 10);
    expect(seeded).toMatchObject({ range: Math.floor(known.target / 10), maxRange: 1500, target: known.target, streak: 0, ceiling: undefined, largest: undefined });
    // sparse contracts: the provider's block limit still holds
    expect(seedRange(known, 0.01).range).toBe(1500);
    // nothing known of their logs: the range as it was
    expect(seedRange(known, undefined).range).toBe(known.range);
  });
});
