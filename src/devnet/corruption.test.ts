import { describe, expect, it } from 'vitest';
import { checkAddress, checkHash, checkIsoTimestamp, checkUint256Text } from '../dataset/validate.ts';
import { verifyHeaderHash } from '../eth/header-hash.ts';
import { TRANSFER_TOPIC } from './chain-log.ts';
import { createChainStore } from './chain-store.ts';
import { corruptHeader, corruptPage, CORRUPTION_KINDS, OVERFLOW_VALUE, parseCorruptionOrder, transferJson, type PageJson } from './corruption.ts';
import { type CorruptedAnswer, createCorruptor } from './corruptor.ts';
import { LogsAnswer } from './logs-answer.ts';
import { encodePageKey } from './page-key.ts';
import { generateSyntheticDataset } from './synthetic.ts';

const dataset = generateSyntheticDataset({ seed: 3, blocks: 60, tokens: 2, transfers: 400, startBlock: 500 });
const contract = dataset.transfers[0]!.contractAddress;
const newestFirst = dataset.transfers.filter((t) => t.contractAddress === contract).sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex);

function pageOf(from: number, size: number, nextPageKey?: string): PageJson {
  const rows = newestFirst.slice(from, from + size).map(transferJson);
  return { contractAddress: contract, count: rows.length, ...(nextPageKey && { nextPageKey }), tokenTransfers: rows };
}

describe('parseCorruptionOrder', () => {
  it('reads a kind, a contract in any case and times, defaulting times to 1', () => {
    expect(parseCorruptionOrder({ kind: 'negative-value' })).toEqual({ order: { kind: 'negative-value', times: 1 } });
    expect(parseCorruptionOrder({ kind: 'huge-body', contract: contract.toUpperCase().replace('0X', '0x'), times: 3 })).toEqual({
      order: { kind: 'huge-body', contract, times: 3 },
    });
  });

  it('clears with kind none', () => {
    expect(parseCorruptionOrder({ kind: 'none' })).toEqual({ order: null });
  });

  it('refuses unknown kinds and keys, bad contracts and bad times, listing the kinds', () => {
    for (const body of [{ kind: 'nope' }, { kind: 'bad-address', times: 0 }, { kind: 'bad-address', contract: '0x12' }, { kind: 'bad-address', extra: 1 }, [], null]) {
      const parsed = parseCorruptionOrder(body);
      expect(parsed).toHaveProperty('error');
    }
    expect(parseCorruptionOrder({ kind: 'nope' })).toEqual({ error: expect.stringContaining(CORRUPTION_KINDS.join(', ')) });
  });
});

describe('corruptPage', () => {
  const page = pageOf(0, 5);
  const middle = page.tokenTransfers[2]!;

  it.each([
    ['bad-address', 'fromAddress', checkAddress],
    ['negative-value', 'value', checkUint256Text],
    ['non-numeric-value', 'value', checkUint256Text],
    ['overflow-value', 'value', checkUint256Text],
    ['missing-field', 'transactionHash', checkHash],
    ['bad-timestamp', 'blockTimestamp', checkIsoTimestamp],
  ] as const)('%s damages %s of the middle row so its field check fails, leaving the input alone', (kind, field, check) => {
    const before = JSON.stringify(page);
    const result = corruptPage(kind, page, {})!;
    const row = result.page.tokenTransfers[2]!;
    expect(check(middle[field])).toBeUndefined();
    expect(check(row[field])).toMatch(/expected/);
    expect(result).toMatchObject({ block: middle.blockNumber, field: `tokenTransfers[2].${field}` });
    expect(JSON.stringify(page)).toBe(before);
    // every other row and field is as served
    expect(result.page.tokenTransfers.filter((_, i) => i !== 2)).toEqual(page.tokenTransfers.filter((_, i) => i !== 2));
  });

  it('writes the values a broken API would: 2^256, a negative number, NaN, a timestamp without T and milliseconds', () => {
    expect(corruptPage('overflow-value', page, {})!.page.tokenTransfers[2]!.value).toBe(OVERFLOW_VALUE);
    expect(BigInt(OVERFLOW_VALUE)).toBe(1n << 256n);
    expect(corruptPage('negative-value', page, {})!.page.tokenTransfers[2]!.value).toMatch(/^-[1-9][0-9]*$/);
    expect(corruptPage('non-numeric-value', page, {})!.page.tokenTransfers[2]!.value).toBe('NaN');
    expect(corruptPage('bad-timestamp', page, {})!.page.tokenTransfers[2]!.blockTimestamp).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(corruptPage('missing-field', page, {})!.page.tokenTransfers[2]).not.toHaveProperty('transactionHash');
  });

  it('count-mismatch says one row more than the page has', () => {
    expect(corruptPage('count-mismatch', page, {})!.page).toMatchObject({ count: 6, tokenTransfers: page.tokenTransfers });
  });

  it('duplicate-in-page repeats the middle row right after it, with a count that matches', () => {
    const { page: bad, field } = corruptPage('duplicate-in-page', page, {})!;
    expect(bad.tokenTransfers).toEqual([...page.tokenTransfers.slice(0, 3), middle, ...page.tokenTransfers.slice(3)]);
    expect(bad.count).toBe(6);
    expect(field).toBe('tokenTransfers[3]');
  });

  it('duplicate-across-pages puts the previous page’s last row first; conflicting-duplicate changes its value', () => {
    const previousRow = newestFirst[4]!;
    const next = pageOf(5, 5);
    const same = corruptPage('duplicate-across-pages', next, { previousRow })!;
    expect(same.page.tokenTransfers).toEqual([transferJson(previousRow), ...next.tokenTransfers]);
    expect(same.page.count).toBe(6);
    const conflicting = corruptPage('conflicting-duplicate', next, { previousRow })!;
    expect(conflicting.page.tokenTransfers[0]).toEqual({ ...transferJson(previousRow), value: expect.not.stringMatching(`^${previousRow.value}$`) });
    expect(conflicting.field).toBe('tokenTransfers[0].value');
  });

  it('repeating-page-key answers the key it was asked with as the next one', () => {
    expect(corruptPage('repeating-page-key', pageOf(5, 5), { pageKey: 'k1' })!.page.nextPageKey).toBe('k1');
  });

  it('does not apply where it cannot: rows kinds to an empty page, cross-page kinds to a first page', () => {
    const empty = { contractAddress: contract, count: 0, tokenTransfers: [] };
    expect(corruptPage('negative-value', empty, {})).toBeUndefined();
    expect(corruptPage('duplicate-in-page', empty, {})).toBeUndefined();
    expect(corruptPage('duplicate-across-pages', page, {})).toBeUndefined();
    expect(corruptPage('repeating-page-key', page, {})).toBeUndefined();
    expect(corruptPage('count-mismatch', empty, {})!.page.count).toBe(1);
  });
});

describe('corruptHeader', () => {
  const header = dataset.headers[40]!;
  it('header-bad-hash changes one field so keccak256(RLP) no longer equals the hash', () => {
    expect(verifyHeaderHash(header, header.hash).ok).toBe(true);
    const { header: bad, field } = corruptHeader('header-bad-hash', header);
    expect(bad.hash).toBe(header.hash);
    expect(verifyHeaderHash(bad, header.hash).ok).toBe(false);
    expect(field).toBe('header.gasUsed');
  });

  it('header-wrong-number answers another number', () => {
    const { header: bad, block } = corruptHeader('header-wrong-number', header);
    expect(block).toBe(Number(BigInt(header.number!)));
    expect(BigInt(bad.number!)).toBe(BigInt(header.number!) + 1n);
  });
});

describe('createCorruptor', () => {
  const secret = 'test secret';
  const chain = createChainStore(dataset);
  const setup = () => {
    const counted: string[] = [];
    const corruptor = createCorruptor({ chain, stats: { countError: (k) => counted.push(k) }, pageKeySecret: secret });
    return { corruptor, counted };
  };
  const params = (query: Record<string, string>) => new URLSearchParams({ contractAddress: contract, ...query });
  const body = (p: PageJson) => JSON.stringify(p);
  const jsonOf = (answer: CorruptedAnswer | undefined): unknown => {
    expect(answer?.type).toBe('json');
    return JSON.parse((answer as { text: string }).text);
  };

  it('corrupts the next `times` answers, counts each as corrupt:<kind>, then serves answers unchanged', () => {
    const { corruptor, counted } = setup();
    corruptor.arm({ kind: 'negative-value', times: 2 });
    expect(corruptor.transfers(params({}), body(pageOf(0, 3)))?.type).toBe('json');
    expect(corruptor.snapshot().armed).toEqual({ kind: 'negative-value', times: 1 });
    expect(corruptor.transfers(params({}), body(pageOf(0, 3)))?.type).toBe('json');
    expect(corruptor.transfers(params({}), body(pageOf(0, 3)))).toBeUndefined();
    expect(counted).toEqual(['corrupt:negative-value', 'corrupt:negative-value']);
    expect(corruptor.snapshot()).toEqual({
      armed: null,
      served: [
        { kind: 'negative-value', contract, block: newestFirst[1]!.blockNumber, field: 'tokenTransfers[1].value' },
        { kind: 'negative-value', contract, block: newestFirst[1]!.blockNumber, field: 'tokenTransfers[1].value' },
      ],
    });
  });

  it('leaves other contracts and inapplicable answers alone without using up the order', () => {
    const { corruptor } = setup();
    corruptor.arm({ kind: 'bad-address', contract, times: 1 });
    const other = new URLSearchParams({ contractAddress: `0x${'ab'.repeat(20)}` });
    expect(corruptor.transfers(other, body(pageOf(0, 3)))).toBeUndefined();
    expect(corruptor.transfers(params({}), body({ contractAddress: contract, count: 0, tokenTransfers: [] }))).toBeUndefined();
    expect(corruptor.snapshot().armed?.times).toBe(1);
    corruptor.clear();
    expect(corruptor.transfers(params({}), body(pageOf(0, 3)))).toBeUndefined();
  });

  it('finds the previous page’s last row from the page key, so duplicate-across-pages needs no state', () => {
    const { corruptor } = setup();
    corruptor.arm({ kind: 'duplicate-across-pages', times: 1 });
    expect(corruptor.transfers(params({}), body(pageOf(0, 4)))).toBeUndefined();
    const last = newestFirst[3]!;
    const pageKey = encodePageKey({ contract, fromBlock: 0, toBlock: 10_000, afterBlock: last.blockNumber, afterLogIndex: last.logIndex, issuedAt: 0 }, secret);
    const answer = corruptor.transfers(params({ pageKey }), body(pageOf(4, 4)));
    expect(answer?.type).toBe('json');
    const page = JSON.parse((answer as { text: string }).text) as PageJson;
    expect(page.tokenTransfers[0]).toEqual(transferJson(last));
    expect(page.tokenTransfers.slice(1)).toEqual(pageOf(4, 4).tokenTransfers);
  });

  it('answers html-200 and huge-body as replacements of the whole body', () => {
    const { corruptor } = setup();
    corruptor.arm({ kind: 'html-200', times: 1 });
    expect(corruptor.transfers(params({}), body(pageOf(0, 1)))).toMatchObject({ type: 'html', text: expect.stringMatching(/^<!DOCTYPE html>/) });
    corruptor.arm({ kind: 'huge-body', times: 1 });
    expect(corruptor.transfers(params({}), body(pageOf(0, 1)))).toMatchObject({ type: 'huge', bytes: 50 * 1024 * 1024 });
  });

  it('damages only erigon_getHeaderByHash results of a batch, and only as many as ordered', () => {
    const { corruptor, counted } = setup();
    const [a, b, c] = dataset.headers;
    const request = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'erigon_getHeaderByNumber', params: ['0x1'] },
      { jsonrpc: '2.0', id: 2, method: 'erigon_getHeaderByHash', params: [b!.hash] },
      { jsonrpc: '2.0', id: 3, method: 'erigon_getHeaderByHash', params: [c!.hash] },
    ]);
    const answer = [
      { jsonrpc: '2.0', id: 1, result: a },
      { jsonrpc: '2.0', id: 2, result: b },
      { jsonrpc: '2.0', id: 3, result: c },
    ];
    expect(corruptor.rpc(request, answer)).toBeUndefined();
    corruptor.arm({ kind: 'header-wrong-number', times: 1 });
    const out = jsonOf(corruptor.rpc(request, answer)) as { result: { number: string } }[];
    expect(out.map((m) => m.result.number)).toEqual([a!.number, `0x${(BigInt(b!.number!) + 1n).toString(16)}`, c!.number]);
    expect(answer[1]!.result).toBe(b);
    expect(counted).toEqual(['corrupt:header-wrong-number']);
    expect(corruptor.snapshot().armed).toBeNull();
  });

  it('damages eth_getLogs results of calls asking for the order’s contract, naming block, log and field', () => {
    const { corruptor, counted } = setup();
    const logsCall = (id: number, address: string) => ({
      jsonrpc: '2.0',
      id,
      method: 'eth_getLogs',
      params: [{ address: [address], topics: [TRANSFER_TOPIC], fromBlock: '0x1f4', toBlock: '0x21b' }],
    });
    // as the server answers them: the logs as stored, written as geth's when sent
    const logsOf = (address: string) => new LogsAnswer(chain.storedLogs(500, 539, new Set([address])));
    const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as { id: number; result: Record<string, unknown>[] };
    const other = dataset.transfers.find((t) => t.contractAddress !== contract)!.contractAddress;
    corruptor.arm({ kind: 'logs-missing-field', contract, times: 1 });
    // another contract's call, and an error answer, pass and leave the order armed
    expect(corruptor.rpc(JSON.stringify(logsCall(1, other)), { jsonrpc: '2.0', id: 1, result: logsOf(other) })).toBeUndefined();
    expect(corruptor.rpc(JSON.stringify(logsCall(1, contract)), { jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'too many' } })).toBeUndefined();
    expect(corruptor.snapshot().armed?.times).toBe(1);
    const request = JSON.stringify([logsCall(1, other), logsCall(2, contract), logsCall(3, contract)]);
    const answer = [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, result: logsOf(id === 1 ? other : contract) }));
    const out = jsonOf(corruptor.rpc(request, answer)) as { id: number; result: Record<string, unknown>[] }[];
    expect(out[0]).toEqual(plain(answer[0]));
    expect(out[2]).toEqual(plain(answer[2]));
    const damaged = out[1]!.result.findIndex((l) => !('transactionHash' in l));
    const log = plain(answer[1]).result[damaged]!;
    expect(out[1]!.result.filter((_, i) => i !== damaged)).toEqual(plain(answer[1]).result.filter((_, i) => i !== damaged));
    expect(corruptor.snapshot()).toEqual({
      armed: null,
      served: [{ kind: 'logs-missing-field', contract, block: Number(log.blockNumber), log: Number(log.logIndex), field: `result[${damaged}].transactionHash` }],
    });
    expect(counted).toEqual(['corrupt:logs-missing-field']);
  });

  it('answers logs-html-200 and logs-huge-body in place of a whole POST holding an eth_getLogs call, and no other', () => {
    const { corruptor } = setup();
    const request = JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'eth_getLogs', params: [{ address: contract, fromBlock: '0x1f4', toBlock: '0x1f4' }] });
    const answer = { jsonrpc: '2.0', id: 4, result: new LogsAnswer([]) };
    corruptor.arm({ kind: 'logs-html-200', times: 2 });
    expect(corruptor.rpc(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'eth_blockNumber', params: [] }), { jsonrpc: '2.0', id: 4, result: '0x1' })).toBeUndefined();
    expect(corruptor.rpc(request, answer)).toMatchObject({ type: 'html', text: expect.stringMatching(/^<!DOCTYPE html>/) });
    corruptor.arm({ kind: 'logs-huge-body', times: 1 });
    expect(corruptor.rpc(request, answer)).toEqual({ type: 'huge', page: JSON.stringify(answer), bytes: 50 * 1024 * 1024 });
    expect(corruptor.snapshot().served).toEqual([
      { kind: 'logs-html-200', contract, field: 'body' },
      { kind: 'logs-huge-body', contract, field: 'body' },
    ]);
  });

  it('damages eth_getBlockByHash results too: a node source reads headers that way', () => {
    const { corruptor } = setup();
    const [a] = dataset.headers;
    const request = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_getBlockByHash', params: [a!.hash, false] });
    const answer = { jsonrpc: '2.0', id: 7, result: { ...a, transactions: [], uncles: [] } };
    corruptor.arm({ kind: 'header-bad-hash', times: 1 });
    const out = jsonOf(corruptor.rpc(request, answer)) as { result: Record<string, unknown> };
    expect(out.result.gasUsed).toBe(`0x${(BigInt(a!.gasUsed!) + 1n).toString(16)}`);
    expect(out.result.hash).toBe(a!.hash);
    expect(out.result.transactions).toEqual([]);
  });
});
