import { describe, expect, it } from 'vitest';
import { BadResponseError } from './errors.ts';
import { a, h, transferRow as row } from './test-rows.ts';
import { parseTransfersPage } from './transfers-page.ts';

const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const QUERY = { contract: USDC, fromBlock: 17_000_000, toBlock: 17_000_100 };

function body(overrides: Record<string, unknown> = {}) {
  const tokenTransfers = [row(17_000_002, 5), row(17_000_002, 1), row(17_000_000, 4)];
  return {
    contractAddress: USDC,
    contractDecimals: '6',
    contractName: 'USD Coin',
    contractSymbol: 'USDC',
    count: tokenTransfers.length,
    nextPageKey: 'key-1',
    tokenTransfers,
    ...overrides,
  };
}

function problemsOf(input: unknown, query = QUERY): string[] {
  try {
    parseTransfersPage(input, query);
  } catch (err) {
    expect(err).toBeInstanceOf(BadResponseError);
    return [...(err as BadResponseError).problems];
  }
  throw new Error('the page was accepted');
}

describe('parseTransfersPage', () => {
  it('reads a valid page: token metadata, rows with the queried contract, the next page key', () => {
    const page = parseTransfersPage(body(), QUERY);
    expect(page.token).toEqual({ contractAddress: USDC, name: 'USD Coin', symbol: 'USDC', decimals: 6 });
    expect(page.count).toBe(3);
    expect(page.nextPageKey).toBe('key-1');
    expect(page.warnings).toEqual([]);
    expect(page.transfers).toHaveLength(3);
    expect(page.transfers[0]).toEqual({ contractAddress: USDC, ...row(17_000_002, 5) });
    expect(page.transfers.map((t) => [t.blockNumber, t.logIndex])).toEqual([
      [17_000_002, 5],
      [17_000_002, 1],
      [17_000_000, 4],
    ]);
  });

  it('accepts the contractSymbols spelling', () => {
    const { contractSymbol: _, ...rest } = body();
    expect(parseTransfersPage({ ...rest, contractSymbols: 'USDC' }, QUERY).token.symbol).toBe('USDC');
  });

  it('reads unknown metadata ("") as null', () => {
    const page = parseTransfersPage(body({ contractName: '', contractSymbol: '', contractDecimals: '' }), QUERY);
    expect(page.token).toEqual({ contractAddress: USDC, name: null, symbol: null, decimals: null });
    expect(page.warnings).toEqual([]);
  });

  it('reads decimals as text or number; non-numeric text is null with a warning', () => {
    expect(parseTransfersPage(body({ contractDecimals: '18' }), QUERY).token.decimals).toBe(18);
    expect(parseTransfersPage(body({ contractDecimals: 6 }), QUERY).token.decimals).toBe(6);
    expect(parseTransfersPage(body({ contractDecimals: '0' }), QUERY).token.decimals).toBe(0);
    for (const odd of ['six', '6.5', '-1', 999, 1.5]) {
      const page = parseTransfersPage(body({ contractDecimals: odd }), QUERY);
      expect(page.token.decimals).toBeNull();
      expect(page.warnings).toEqual([
        expect.stringContaining(`contract ${USDC}, blocks 17000000–17000100, contractDecimals: expected an integer from 0 to 255, got ${JSON.stringify(odd)}`),
      ]);
    }
  });

  it('treats nextPageKey absent, null or "" as the last page', () => {
    const { nextPageKey: _, ...withoutKey } = body();
    expect(parseTransfersPage(withoutKey, QUERY).nextPageKey).toBeUndefined();
    expect(parseTransfersPage(body({ nextPageKey: null }), QUERY).nextPageKey).toBeUndefined();
    expect(parseTransfersPage(body({ nextPageKey: '' }), QUERY).nextPageKey).toBeUndefined();
    expect(problemsOf(body({ nextPageKey: 42 }))).toEqual([expect.stringContaining('nextPageKey: expected an opaque text, null or nothing, got 42')]);
  });

  it('ignores unknown extra keys on the page and on rows', () => {
    const b = body({ pageInfo: { x: 1 } });
    b.tokenTransfers[0] = { ...b.tokenTransfers[0]!, uniqueId: 'abc' } as never;
    const page = parseTransfersPage(b, QUERY);
    expect(page.transfers[0]).not.toHaveProperty('uniqueId');
  });

  it('accepts an empty page', () => {
    const page = parseTransfersPage(body({ tokenTransfers: [], count: 0, nextPageKey: undefined }), QUERY);
    expect(page.transfers).toEqual([]);
    expect(page.count).toBe(0);
  });

  it('names contract, block and field of a bad value', () => {
    const b = body();
    b.tokenTransfers[2] = row(17_000_000, 4, { value: '-5' });
    expect(problemsOf(b)).toEqual([`contract ${USDC}, block 17000000, tokenTransfers[2].value: expected decimal integer text from 0 to 2^256-1, got "-5"`]);
  });

  it('checks every field of a row', () => {
    const bad = {
      fromAddress: '0xABC',
      toAddress: 7,
      value: '1e18',
      blockHash: h('Z'),
      blockTimestamp: '2023-04-08 21:26:11',
      transactionHash: null,
      transactionIndex: -1,
      logIndex: 1.5,
    };
    const problems = problemsOf(body({ tokenTransfers: [row(17_000_001, 1, bad)], count: 1 }));
    expect(problems.map((p) => p.split(': ')[0])).toEqual(
      ['fromAddress', 'toAddress', 'value', 'blockHash', 'blockTimestamp', 'transactionHash', 'transactionIndex', 'logIndex'].map(
        (f) => `contract ${USDC}, block 17000001, tokenTransfers[0].${f}`,
      ),
    );
  });

  it('names the queried range when the block number itself is bad', () => {
    expect(problemsOf(body({ tokenTransfers: [row(17_000_001, 1, { blockNumber: '17000001' })], count: 1 }))).toEqual([
      `contract ${USDC}, blocks 17000000–17000100, tokenTransfers[0].blockNumber: expected a non-negative integer, got "17000001"`,
    ]);
  });

  it('refuses a page of another contract', () => {
    expect(problemsOf(body({ contractAddress: a('9') }))).toEqual([
      `contract ${USDC}, blocks 17000000–17000100, contractAddress: expected the queried contract ${USDC}, got "${a('9')}"`,
    ]);
    expect(problemsOf(body({ contractAddress: USDC.toUpperCase().replace('0X', '0x') }))[0]).toContain('contractAddress: expected a lower-case 0x address');
  });

  it('refuses a count that is not the number of rows', () => {
    expect(problemsOf(body({ count: 4 }))).toEqual([
      `contract ${USDC}, blocks 17000000–17000100 (this page: blocks 17000000–17000002), count: expected the number of rows in tokenTransfers (3), got 4`,
    ]);
    expect(problemsOf(body({ tokenTransfers: [], count: 1 }))).toEqual([
      `contract ${USDC}, blocks 17000000–17000100, count: expected the number of rows in tokenTransfers (0), got 1`,
    ]);
    expect(problemsOf(body({ count: '3' }))[0]).toContain('count: expected a non-negative integer, got "3"');
  });

  it('refuses rows outside the queried blocks', () => {
    const b = body({ tokenTransfers: [row(17_000_101, 0), row(16_999_999, 3)], count: 2 });
    expect(problemsOf(b)).toEqual([
      `contract ${USDC}, block 17000101, tokenTransfers[0].blockNumber: expected a block from 17000000 to 17000100 (the queried range), got 17000101`,
      `contract ${USDC}, block 16999999, tokenTransfers[1].blockNumber: expected a block from 17000000 to 17000100 (the queried range), got 16999999`,
    ]);
  });

  it('refuses rows that are not newest first (block, then log index, descending)', () => {
    const ascending = body({ tokenTransfers: [row(17_000_000, 4), row(17_000_002, 1)], count: 2 });
    expect(problemsOf(ascending)).toEqual([
      expect.stringContaining('tokenTransfers[1]: expected newest first (blockNumber, then logIndex, descending), got block 17000002 log 1 after block 17000000 log 4'),
    ]);
    const logAscending = body({ tokenTransfers: [row(17_000_002, 1), row(17_000_002, 5)], count: 2 });
    expect(problemsOf(logAscending)).toEqual([expect.stringContaining('got block 17000002 log 5 after block 17000002 log 1')]);
  });

  it('keeps a row served twice in a row, identically, once, with a warning naming contract, block and row', () => {
    const twice = row(17_000_002, 5);
    const page = parseTransfersPage(body({ tokenTransfers: [twice, { ...twice }, row(17_000_000, 4)], count: 3 }), QUERY);
    expect(page.transfers).toEqual([
      { contractAddress: USDC, ...twice },
      { contractAddress: USDC, ...row(17_000_000, 4) },
    ]);
    expect(page.count).toBe(2);
    expect(page.warnings).toEqual([
      `contract ${USDC}, block 17000002, tokenTransfers[1]: the same transfer (transactionHash ${twice.transactionHash}, logIndex 5) as tokenTransfers[0], served twice; kept once`,
    ]);
  });

  it('refuses the same (transactionHash, logIndex) twice in a page with other fields, or not next to each other', () => {
    const twice = row(17_000_002, 5);
    const conflicting = problemsOf(body({ tokenTransfers: [twice, { ...twice, value: '7' }], count: 2 }));
    expect(conflicting).toContain(
      `contract ${USDC}, block 17000002, tokenTransfers[1]: the same transfer (transactionHash ${twice.transactionHash}, logIndex 5) as tokenTransfers[0]`,
    );
    const apart = problemsOf(body({ tokenTransfers: [twice, row(17_000_002, 1), { ...twice }], count: 3 }));
    expect(apart).toContain(`contract ${USDC}, block 17000002, tokenTransfers[2]: the same transfer (transactionHash ${twice.transactionHash}, logIndex 5) as tokenTransfers[0]`);
  });

  it('refuses rows of one block that disagree on its hash or timestamp', () => {
    const problems = problemsOf(body({ tokenTransfers: [row(17_000_002, 5), row(17_000_002, 1, { blockHash: h('f'), blockTimestamp: '2020-01-01T00:00:00.000Z' })], count: 2 }));
    expect(problems).toEqual([
      expect.stringContaining('tokenTransfers[1].blockHash: expected 0x2222'),
      expect.stringContaining('tokenTransfers[1].blockTimestamp: expected 2023-04-08T21:26:22.000Z as in tokenTransfers[0]'),
    ]);
  });

  it('reports every problem of a page at once, in one error', () => {
    const b = body({ contractAddress: a('9'), count: 9, contractName: 5 });
    b.tokenTransfers[0] = row(17_000_002, 5, { value: '-5' });
    b.tokenTransfers[2] = row(17_000_000, 4, { toAddress: 'nobody' });
    let err: BadResponseError | undefined;
    try {
      parseTransfersPage(b, QUERY);
    } catch (e) {
      err = e as BadResponseError;
    }
    expect(err?.problems).toHaveLength(5);
    expect(err?.message).toContain('getTokenTransfers answered a malformed page for contract 0xa0b8');
    expect(err?.message).toContain('(5 problems)');
    for (const field of ['contractAddress', 'contractName', 'count', 'tokenTransfers[0].value', 'tokenTransfers[2].toAddress']) {
      expect(err?.message).toContain(`${field}: expected`);
    }
  });

  it('refuses a body that is not an object, or rows that are not an array', () => {
    expect(problemsOf('<html>')).toEqual([`contract ${USDC}, blocks 17000000–17000100, body: expected a JSON object, got "<html>"`]);
    expect(problemsOf(body({ tokenTransfers: null }))).toEqual([`contract ${USDC}, blocks 17000000–17000100, tokenTransfers: expected an array, got null`]);
    expect(problemsOf(body({ tokenTransfers: [1], count: 1 }))).toEqual([`contract ${USDC}, blocks 17000000–17000100, tokenTransfers[0]: expected an object, got 1`]);
  });
});
