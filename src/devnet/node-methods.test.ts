import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readDataset } from '../dataset/read.ts';
import { createChainStore } from './chain-store.ts';
import { TRANSFER_TOPIC } from './chain-log.ts';
import { call, getBlockByHash, getBlockByNumber, getLogs, type NodeContext } from './node-methods.ts';
import { reorgDataset } from './reorg.ts';
import { RpcFailure } from './rpc-errors.ts';
import { handleRpcBody } from './rpc-handler.ts';
import { rpcMethod } from './rpc-methods.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from './synthetic.ts';

const FIXTURE = fileURLToPath(new URL('../../test/fixtures/mainnet', import.meta.url));
const options = { ...SYNTHETIC_DEFAULTS, blocks: 100, transfers: 600, tokens: 3 };
const dataset = generateSyntheticDataset(options);
const context = (extra: Partial<NodeContext> = {}): NodeContext => ({ chain: createChainStore(dataset), headerLags: () => false, ...extra });
const hex = (n: number) => `0x${n.toString(16)}`;
const busiest = (() => {
  const counts = new Map<number, number>();
  for (const t of dataset.transfers) counts.set(t.blockNumber, (counts.get(t.blockNumber) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]!;
})();
const failure = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    if (err instanceof RpcFailure) return { code: err.code, message: err.message, data: err.data };
    throw err;
  }
  throw new Error('expected a failure');
};

describe('eth_getLogs', () => {
  it('answers one block by blockHash, an unknown hash with -32000, a block that left the chain with nothing', () => {
    const [number, count] = busiest;
    const header = dataset.headers.find((h) => h.number === hex(number))!;
    const ctx = context();
    expect(getLogs([{ blockHash: header.hash }], ctx).length).toBe(count);
    expect(failure(() => getLogs([{ blockHash: `0x${'ee'.repeat(32)}` }], ctx))).toMatchObject({ code: -32000, message: 'unknown block' });
    const { dataset: after, orphaned } = reorgDataset(dataset, 100, 1);
    ctx.chain.replace(after, orphaned);
    expect(getLogs([{ blockHash: orphaned.at(-1)!.hash }], ctx).toJSON()).toEqual([]);
  });

  it('answers nothing past the head', () => {
    const head = options.startBlock + options.blocks - 1;
    expect(getLogs([{ fromBlock: hex(head + 1), toBlock: hex(head + 50) }], context()).toJSON()).toEqual([]);
  });

  it('refuses a range over the cap before it reads a log, and more logs than the cap with a range that fits', () => {
    const ctx = context({ logsLimits: { maxRange: 10, maxResults: busiest[1] - 1, style: 'infura' } });
    const head = options.startBlock + options.blocks - 1;
    expect(failure(() => getLogs([{ fromBlock: hex(options.startBlock), toBlock: hex(head) }], ctx))).toMatchObject({ code: -32602, message: 'range 100 exceeds limit of 10' });
    const [number] = busiest;
    const overflow = failure(() => getLogs([{ fromBlock: hex(number), toBlock: hex(number) }], ctx));
    expect(overflow).toMatchObject({ code: -32005, message: `query returned more than ${busiest[1] - 1} results. Try with this block range [${hex(number)}, ${hex(number)}].` });
    expect(overflow.data).toEqual({ from: hex(number), to: hex(number), limit: busiest[1] - 1 });
  });

  it('hangs only over more than one block, and only when the fault says so', () => {
    let asked = 0;
    const ctx = context({
      logsHang: () => {
        asked++;
        return true;
      },
    });
    expect(() => getLogs([{ fromBlock: hex(options.startBlock), toBlock: hex(options.startBlock) }], ctx)).not.toThrow();
    expect(asked).toBe(0);
    expect(() => getLogs([{ fromBlock: hex(options.startBlock), toBlock: hex(options.startBlock + 1) }], ctx)).toThrow(/hangs/);
    expect(asked).toBe(1);
  });

  it('a batch holding a call that hangs is not answered at all', () => {
    const ctx = { ...context({ logsHang: () => true }), chainId: 1 };
    const body = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId' },
      { jsonrpc: '2.0', id: 2, method: 'eth_getLogs', params: [{ fromBlock: 'earliest', toBlock: 'latest', topics: [TRANSFER_TOPIC] }] },
    ]);
    const errors: unknown[] = [];
    const settled: unknown[] = [];
    const observer = {
      call: () => {},
      error: (e: unknown) => void errors.push(e),
      answered: (method: string) => void settled.push([method, 'answered']),
      refused: (method: string, reason: string) => void settled.push([method, reason]),
    };
    expect(handleRpcBody(body, ctx, observer)).toEqual({ status: 0, body: undefined, hang: true });
    expect(errors).toEqual(['hang']);
    // eth_chainId was never sent: neither answered nor refused
    expect(settled).toEqual([['eth_getLogs', 'hang']]);
  });
});

describe('eth_getBlockByHash and eth_getBlockByNumber', () => {
  it('answer the header as given, every key kept, with empty transactions and uncles, or null', () => {
    const ctx = context();
    const header = dataset.headers[10]!;
    expect(getBlockByHash([header.hash, false], ctx)).toEqual({ ...header, transactions: [], uncles: [] });
    expect(Object.keys(getBlockByHash([header.hash, false], ctx) as object)).toEqual([...Object.keys(header), 'transactions', 'uncles']);
    expect(getBlockByHash([`0x${'ee'.repeat(32)}`, false], ctx)).toBeNull();
    expect(getBlockByNumber([header.number, true], ctx)).toEqual({ ...header, transactions: [], uncles: [] });
    expect(getBlockByNumber(['0x1', false], ctx)).toBeNull();
  });

  it('keep a header’s own transactions and uncles', () => {
    const given = { ...dataset.headers[0]!, transactions: [`0x${'12'.repeat(32)}`], uncles: [] };
    const chain = createChainStore({ headers: [given as never], transfers: [], tokens: [] });
    expect(getBlockByNumber(['latest', false], { chain, headerLags: () => false })).toEqual(given);
  });

  it('resolve latest to the head, earliest to the lowest block held, safe and finalized to the held block at or below them', async () => {
    const ctx = context();
    const number = (tag: string) => Number(BigInt((getBlockByNumber([tag, false], ctx) as { number: string }).number));
    expect([number('latest'), number('earliest'), number('safe'), number('finalized')]).toEqual([18_000_099, 18_000_000, 18_000_067, 18_000_035]);
    // the mainnet fixture holds 35 blocks from genesis on: finalized is the highest of them 64 blocks behind the head
    const sparse = { chain: createChainStore(await readDataset(FIXTURE)), headerLags: () => false };
    const at = (tag: string) => Number(BigInt((getBlockByNumber([tag, false], sparse) as { number: string }).number));
    expect(at('earliest')).toBe(0);
    expect(at('finalized')).toBeLessThanOrEqual(19_900_000 - 64);
    expect(at('finalized')).toBeGreaterThan(0);
  });

  it('answer null for a hash the header-lag fault hides', () => {
    expect(getBlockByHash([dataset.headers[3]!.hash, false], context({ headerLags: () => true }))).toBeNull();
  });

  it('want the full-transactions flag, as geth does', () => {
    expect(failure(() => getBlockByHash([dataset.headers[3]!.hash], context())).message).toBe('missing value for required argument 1');
    expect(failure(() => getBlockByNumber(['latest', 'no'], context())).code).toBe(-32602);
  });
});

describe('eth_call', () => {
  const listed = dataset.tokens[0]!;
  it('answers a listed token’s getters, reverts with geth’s -32000 "execution reverted" where the token lacks one', () => {
    const ctx = context();
    expect(call([{ to: listed.contractAddress, data: '0x313ce567' }, 'latest'], ctx)).toBe(`0x${BigInt(listed.contractDecimals).toString(16).padStart(64, '0')}`);
    expect(call([{ to: listed.contractAddress, input: '0x313ce567' }], ctx)).toBe(call([{ to: listed.contractAddress, data: '0x313ce567' }], ctx));
    expect(failure(() => call([{ to: listed.contractAddress, data: '0xdeadbeef' }], ctx))).toMatchObject({ code: -32000, message: 'execution reverted' });
    expect(call([{ to: `0x${'ee'.repeat(20)}`, data: '0x06fdde03' }], ctx)).toBe('0x');
  });

  it('refuses a call object that is not one', () => {
    expect(failure(() => call(['0x06fdde03'], context())).code).toBe(-32602);
    expect(failure(() => call([{ to: '0x12', data: '0x06fdde03' }], context())).code).toBe(-32602);
    expect(failure(() => call([{ to: listed.contractAddress, data: '0x06fdde0' }], context())).code).toBe(-32602);
  });
});

describe('--no-erigon', () => {
  it('makes every erigon_* method unknown (-32601) and leaves the others', () => {
    const ctx = { ...context(), chainId: 1, erigon: false };
    expect(failure(() => rpcMethod('erigon_getHeaderByHash', ctx))).toMatchObject({ code: -32601, message: 'the method erigon_getHeaderByHash does not exist/is not available' });
    expect(rpcMethod('eth_getBlockByHash', ctx)).toBeTypeOf('function');
    expect(rpcMethod('erigon_getHeaderByHash', { ...ctx, erigon: true })).toBeTypeOf('function');
    expect(failure(() => rpcMethod('toString', ctx)).code).toBe(-32601);
  });
});
