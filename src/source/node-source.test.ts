import { hexToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../common/clock.ts';
import { isRetryable } from '../common/errors.ts';
import { createSourceCounters } from '../common/source-counters.ts';
import type { TransferRecord } from '../dataset/types.ts';
import { computeHeaderHash } from '../eth/header-hash.ts';
import { bloomBits, createBloomBitsCache, TRANSFER_TOPIC, unpackBloomBits } from '../eth/logs-bloom.ts';
import { parseApiUrl } from '../config/api-url.ts';
import { BadResponseError, HttpStatusError, PageKeyRejectedError, ResponseTooLargeError } from './errors.ts';
import { CallTimeoutError, type CallOptions, type HttpClient } from './http-client.ts';
import { readResultElements } from './json-body.ts';
import { createNodeSource, type NodeSource, type NodeSourceDeps } from './node-source.ts';
import type { PageQuery } from './source.ts';
import { decodeDecimalsResult, decodeTextResult } from './token-metadata.ts';

const USDC = `0x${'a0'.repeat(20)}`;
const DAI = `0x${'6b'.repeat(20)}`;
const NFT = `0x${'77'.repeat(20)}`;
const word = (n: number | bigint) => n.toString(16).padStart(64, '0');
const topic = (address: string) => `0x${'00'.repeat(12)}${address.slice(2)}`;
const holder = (i: number) => `0x${(i + 1).toString(16).padStart(40, '0')}`;
const quantity = (n: number) => `0x${n.toString(16)}`;
const TIME_BASE = 1_700_000_000;
const instant: Clock = { now: () => Date.now(), sleep: async () => undefined };

interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  transactionIndex: string;
  logIndex: string;
  removed: boolean;
  blockTimestamp?: string;
}

/** A chain of blocks first…last, with `perBlock(n)` Transfer logs of the listed contracts in block n, each block's bloom true to its logs (but `leaveOut`). */
function buildChain(first: number, last: number, perBlock: (n: number) => { address: string; shape?: 'erc721' }[], leaveOut?: (log: RawLog) => boolean) {
  const headers = new Map<string, Record<string, string | null>>();
  const logs: RawLog[] = [];
  const bits = createBloomBitsCache();
  for (let n = first; n <= last; n++) {
    const bloom = new Uint8Array(256);
    const set = (b: readonly number[]) => {
      for (const bit of b) bloom[255 - (bit >> 3)]! |= 1 << (bit & 7);
    };
    const own: RawLog[] = perBlock(n).map((l, i) => ({
      address: l.address,
      topics: [TRANSFER_TOPIC, topic(holder(n + i)), topic(holder(n + i + 1)), ...(l.shape === 'erc721' ? [`0x${word(i)}`] : [])],
      data: l.shape === 'erc721' ? '0x' : `0x${word(1000n * BigInt(n) + BigInt(i))}`,
      blockNumber: quantity(n),
      blockHash: '',
      transactionHash: `0x${word(n * 1000 + i)}`,
      transactionIndex: quantity(i),
      logIndex: quantity(i),
      removed: false,
    }));
    for (const log of own) {
      if (leaveOut?.(log)) continue;
      set(unpackBloomBits(bits('address', log.address)));
      set(bloomBits(hexToBytes(TRANSFER_TOPIC.slice(2))));
      set(unpackBloomBits(bits('topic', `0x${log.topics[1]!.slice(26)}`)));
      set(unpackBloomBits(bits('topic', `0x${log.topics[2]!.slice(26)}`)));
    }
    const header: Record<string, string | null> = {
      parentHash: `0x${word(n - 1)}`,
      sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347',
      miner: `0x${'00'.repeat(20)}`,
      stateRoot: `0x${'11'.repeat(32)}`,
      transactionsRoot: `0x${'22'.repeat(32)}`,
      receiptsRoot: `0x${'33'.repeat(32)}`,
      logsBloom: `0x${Buffer.from(bloom).toString('hex')}`,
      difficulty: '0x1',
      number: quantity(n),
      gasLimit: '0x1c9c380',
      gasUsed: '0x0',
      timestamp: quantity(TIME_BASE + 12 * n),
      extraData: '0x',
      mixHash: `0x${'44'.repeat(32)}`,
      nonce: '0x0000000000000000',
      baseFeePerGas: null,
      withdrawalsRoot: null,
      blobGasUsed: null,
      excessBlobGas: null,
      parentBeaconBlockRoot: null,
      requestsHash: null,
      blockAccessListHash: null,
    };
    const hash = computeHeaderHash(header);
    headers.set(hash, { ...header, hash });
    for (const log of own) logs.push({ ...log, blockHash: hash });
  }
  return { headers, logs };
}

type Chain = ReturnType<typeof buildChain>;

/** What the node does besides answering: caps, a missing erigon namespace, a batch limit, its own answers for some calls. */
interface NodeBehaviour {
  /** Most logs an eth_getLogs answer may hold: over it, Infura's refusal with its suggested range. */
  maxResults?: number;
  /** eth_getLogs over more blocks than this gets no answer in time. */
  hangsOver?: number;
  /** eth_getLogs answers of more logs than this are too large to read (`ResponseTooLargeError`). */
  tooLargeOver?: number;
  erigon?: boolean;
  batchLimit?: number;
  /** Overrides the answer of a call: undefined answers as the chain does. */
  answer?: (method: string, params: unknown[], calls: number) => unknown;
}

interface Call {
  method: string;
  params: unknown[];
  options?: CallOptions | undefined;
}

/** The answer with its `result` array (if any) copied, so that reading it in place leaves the one given untouched. */
function copyResult(answer: unknown): unknown {
  const result = (answer as { result?: unknown } | undefined)?.result;
  return Array.isArray(result) ? { ...(answer as object), result: [...result] } : answer;
}

/** An HttpClient whose postJson is a JSON-RPC node serving `chain`. */
function fakeNode(chain: Chain, behaviour: NodeBehaviour = {}) {
  const counters = createSourceCounters();
  const calls: Call[] = [];
  const answerOne = (call: { id: number; method: string; params: unknown[] }, options?: CallOptions) => {
    calls.push({ method: call.method, params: call.params, options });
    const same = calls.filter((c) => c.method === call.method).length;
    const given = behaviour.answer?.(call.method, call.params, same);
    if (given !== undefined) return { jsonrpc: '2.0', id: call.id, ...(given as object) };
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id: call.id, result });
    const error = (code: number, message: string) => ({ jsonrpc: '2.0', id: call.id, error: { code, message } });
    switch (call.method) {
      case 'eth_getLogs': {
        const filter = call.params[0] as { address: string[]; fromBlock: string; toBlock: string };
        const [from, to] = [Number(filter.fromBlock), Number(filter.toBlock)];
        if (behaviour.hangsOver !== undefined && to - from + 1 > behaviour.hangsOver) throw new CallTimeoutError('POST node', options?.timeoutMs ?? -1);
        const found = chain.logs.filter((l) => filter.address.includes(l.address) && Number(l.blockNumber) >= from && Number(l.blockNumber) <= to);
        if (behaviour.tooLargeOver !== undefined && found.length > behaviour.tooLargeOver) {
          throw new ResponseTooLargeError({ endpoint: parseApiUrl('http://node.example/', undefined, 'node'), method: 'POST', pathAndQuery: '' }, 1000);
        }
        if (behaviour.maxResults !== undefined && found.length > behaviour.maxResults) {
          const fits = found[behaviour.maxResults]!;
          const end = Math.max(from, Number(fits.blockNumber) - 1);
          return error(-32005, `query returned more than ${behaviour.maxResults} results. Try with this block range [${quantity(from)}, ${quantity(end)}].`);
        }
        return ok(found);
      }
      case 'erigon_getHeaderByHash':
        if (behaviour.erigon === false) return error(-32601, 'the method erigon_getHeaderByHash does not exist/is not available');
        return chain.headers.has(call.params[0] as string) ? ok(chain.headers.get(call.params[0] as string)) : error(-32000, 'header not found');
      case 'eth_getBlockByHash': {
        const header = chain.headers.get(call.params[0] as string);
        return ok(header ? { ...header, transactions: [`0x${'dd'.repeat(32)}`], uncles: [], size: '0x220' } : null);
      }
      case 'eth_blockNumber':
        return ok(quantity(Math.max(...[...chain.headers.values()].map((h) => Number(h.number)))));
      case 'eth_chainId':
        return ok('0x7a69');
      default:
        return error(-32601, `the method ${call.method} does not exist/is not available`);
    }
  };
  const http: HttpClient = {
    counters,
    async getJson() {
      throw new Error('a node source never GETs');
    },
    async postJson(body, _context, options) {
      counters.rpcPosts++;
      // read as the HTTP client reads an answer it parses (CallOptions.resultElement), in a copy: answers may be shared
      if (!Array.isArray(body)) return readResultElements(copyResult(answerOne(body as never, options)), options?.resultElement);
      if (behaviour.batchLimit !== undefined && body.length > behaviour.batchLimit) {
        throw new HttpStatusError('batch too large', 'POST node', { status: 400, apiCode: -32600, apiMessage: `batch too large (at most ${behaviour.batchLimit})` });
      }
      return body.map((call) => answerOne(call as never));
    },
    close: async () => undefined,
  };
  return { http, counters, calls, logsAsked: () => calls.filter((c) => c.method === 'eth_getLogs').map((c) => spanOf(c.params[0])) };
}

const spanOf = (filter: unknown) => {
  const f = filter as { fromBlock: string; toBlock: string };
  return [Number(f.fromBlock), Number(f.toBlock)] as const;
};

/** A node's own answer (`NodeBehaviour.answer`): eth_getLogs over more than `blocks` blocks refused with `code` and `message`. */
const refusingOver = (blocks: number, code: number, message: string) => (method: string, params: unknown[]) => {
  if (method !== 'eth_getLogs') return undefined;
  const [from, to] = spanOf(params[0]);
  return to - from + 1 > blocks ? { error: { code, message } } : undefined;
};

function sourceOf(node: ReturnType<typeof fakeNode>, deps: Partial<NodeSourceDeps> = {}): NodeSource {
  return createNodeSource({ http: node.http, counters: node.counters, headerBatchSize: 100, clock: instant, ...deps });
}

/** Every page of a query, following the keys (from `from`, a page key it gave, when given). */
async function readAll(source: NodeSource, query: Omit<PageQuery, 'pageSize'>, from?: string) {
  const pages = [];
  let pageKey: string | undefined = from;
  do {
    const page = await source.fetchPage({ ...query, pageSize: 1000, pageKey });
    pages.push(page);
    pageKey = page.nextPageKey;
  } while (pageKey !== undefined && pages.length < 1000);
  return { pages, rows: pages.flatMap((p) => p.transfers) };
}

/** The chain's ERC-20 transfers of `contract` as rows, newest first. */
function expectedRows(chain: Chain, contract: string): TransferRecord[] {
  return chain.logs
    .filter((l) => l.address === contract && l.topics.length === 3)
    .map((l) => ({
      contractAddress: l.address,
      fromAddress: `0x${l.topics[1]!.slice(26)}`,
      toAddress: `0x${l.topics[2]!.slice(26)}`,
      value: BigInt(l.data).toString(),
      blockHash: l.blockHash,
      blockNumber: Number(l.blockNumber),
      blockTimestamp: new Date((TIME_BASE + 12 * Number(l.blockNumber)) * 1000).toISOString(),
      transactionHash: l.transactionHash,
      transactionIndex: Number(l.transactionIndex),
      logIndex: Number(l.logIndex),
    }))
    .reverse();
}

// two USDC transfers in every block, a DAI transfer in every third
const busy = (n: number) => [{ address: USDC }, { address: USDC }, ...(n % 3 === 0 ? [{ address: DAI }] : [])];

describe('createNodeSource: pages', () => {
  it('pages newest first over block spans at the top of what is left, each key naming the block below', async () => {
    const chain = buildChain(100, 139, busy);
    const node = fakeNode(chain);
    const source = sourceOf(node, { startRange: 10 });
    const first = await source.fetchPage({ contract: USDC, fromBlock: 100, toBlock: 139, pageSize: 5 });
    expect(node.logsAsked()).toEqual([[130, 139]]);
    expect(first.nextPageKey).toBe('node:129');
    expect(first.transfers.map((t) => [t.blockNumber, t.logIndex])).toEqual(
      [139, 138, 137, 136, 135, 134, 133, 132, 131, 130].flatMap((n) => [
        [n, 1],
        [n, 0],
      ]),
    );
    const { pages, rows } = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 139 });
    expect(rows).toEqual(expectedRows(chain, USDC));
    expect(pages.at(-1)!.nextPageKey).toBeUndefined();
    // the spans follow one another down to the first block, whole blocks each
    const spans = node.logsAsked().slice(1);
    expect(spans[0]![1]).toBe(139);
    for (let i = 1; i < spans.length; i++) expect(spans[i]![1]).toBe(spans[i - 1]![0] - 1);
    expect(spans.at(-1)![0]).toBe(100);
    expect(node.counters.logsCalls).toBe(node.logsAsked().length);
  });

  it('answers an empty span with an empty page and the key below it', async () => {
    const chain = buildChain(100, 139, (n) => (n < 110 ? [{ address: DAI }] : []));
    const source = sourceOf(fakeNode(chain), { startRange: 10 });
    const page = await source.fetchPage({ contract: DAI, fromBlock: 100, toBlock: 139, pageSize: 1000 });
    expect(page).toMatchObject({ count: 0, transfers: [], nextPageKey: 'node:129' });
    const { rows } = await readAll(source, { contract: DAI, fromBlock: 100, toBlock: 139 });
    expect(rows).toEqual(expectedRows(chain, DAI));
  });

  it('refuses a page key it did not give for this query, so the pipeline restarts from its committed blocks', async () => {
    const source = sourceOf(fakeNode(buildChain(100, 109, busy)));
    for (const pageKey of ['eyJ0byI6MTB9', 'node:139', 'node:x']) {
      await expect(source.fetchPage({ contract: USDC, fromBlock: 100, toBlock: 109, pageSize: 10, pageKey })).rejects.toBeInstanceOf(PageKeyRejectedError);
    }
  });
});

describe('createNodeSource: contracts read together', () => {
  /** Each contract's pages as the pipeline reads a chunk: the next page asked as soon as a page arrives. */
  const readTogether = (source: NodeSource, contracts: readonly string[], fromBlock: number, toBlock: number) =>
    Promise.all(contracts.map((contract) => readAll(source, { contract, fromBlock, toBlock })));
  const addressesAsked = (node: ReturnType<typeof fakeNode>) =>
    node.calls.filter((c) => c.method === 'eth_getLogs').map((c) => [...(c.params[0] as { address: string[] }).address].sort());

  it('names every contract read over the same blocks in one eth_getLogs, each page what a call of its own finds', async () => {
    const chain = buildChain(100, 199, busy);
    const node = fakeNode(chain);
    const source = sourceOf(node, { startRange: 10 });
    const [usdc, dai] = await readTogether(source, [USDC, DAI], 100, 199);
    expect(usdc!.rows).toEqual(expectedRows(chain, USDC));
    expect(dai!.rows).toEqual(expectedRows(chain, DAI));
    // the first pages start apart; from the second on, one call answers both
    const asked = addressesAsked(node);
    expect(asked.slice(0, 2).map((a) => a.length)).toEqual([1, 1]);
    expect(asked.slice(2).every((a) => a.length === 2)).toBe(true);
    expect(asked.length).toBeLessThan(usdc!.pages.length + 2);
    // both went down the same spans
    expect(usdc!.pages.map((p) => p.nextPageKey)).toEqual(dai!.pages.map((p) => p.nextPageKey));
  });

  it('waits for a contract a span behind it over the same blocks, so that one call names both from then on', async () => {
    const chain = buildChain(100, 399, busy);
    const node = fakeNode(chain);
    const source = sourceOf(node, { startRange: 10 });
    /** Every page of a contract's query from `key` on, `pause` ms after each (its pages take longer to write). */
    const pagesOf = async (contract: string, pause: number, key?: string) => {
      const transfers = [];
      let pageKey = key;
      do {
        const page = await source.fetchPage({ contract, fromBlock: 100, toBlock: 399, pageSize: 1000, pageKey });
        transfers.push(...page.transfers);
        pageKey = page.nextPageKey;
        await new Promise((resolve) => setTimeout(resolve, pause));
      } while (pageKey !== undefined);
      return transfers;
    };
    // USDC's first page is read before DAI starts, and DAI's pages are slower: USDC would stay a span ahead, alone
    const first = await source.fetchPage({ contract: USDC, fromBlock: 100, toBlock: 399, pageSize: 1000 });
    const [usdc, dai] = await Promise.all([pagesOf(USDC, 0, first.nextPageKey), pagesOf(DAI, 5)]);
    expect([...first.transfers, ...usdc]).toEqual(expectedRows(chain, USDC));
    expect(dai).toEqual(expectedRows(chain, DAI));
    const asked = addressesAsked(node).map((a) => a.length);
    // USDC alone until DAI has asked once, then DAI alone down to where USDC waits; every later call names both
    const together = asked.indexOf(2);
    expect(together).toBeGreaterThan(0);
    expect(together).toBeLessThanOrEqual(4);
    expect(asked.slice(together).every((n) => n === 2)).toBe(true);
  });

  it('does not wait for a query the pipeline ended (a chunk that gave its lower blocks away)', async () => {
    const chain = buildChain(100, 399, busy);
    const node = fakeNode(chain);
    const debug: string[] = [];
    const logger = { debug: (o: { msg: string }) => debug.push(o.msg), warn: () => undefined };
    const source = sourceOf(node, { startRange: 10, logger: logger as never });
    const query = (contract: string, pageKey?: string) => ({ contract, fromBlock: 100, toBlock: 399, pageSize: 1000, ...(pageKey && { pageKey }) });
    // USDC three pages ahead; DAI reads one page, which leaves it expected a span above USDC, and its chunk ends there
    const usdc1 = await source.fetchPage(query(USDC));
    const usdc2 = await source.fetchPage(query(USDC, usdc1.nextPageKey));
    const usdc3 = await source.fetchPage(query(USDC, usdc2.nextPageKey));
    await source.fetchPage(query(DAI));
    source.endQuery({ contract: DAI, fromBlock: 100, toBlock: 399 });
    const usdc4 = await source.fetchPage(query(USDC, usdc3.nextPageKey));
    expect(usdc4.transfers.length).toBeGreaterThan(0);
    expect(debug.filter((m) => m.includes('did not come down'))).toEqual([]);
  });

  it('does not name a contract whose first call is still out: the call could not be sized for its logs', async () => {
    const chain = buildChain(100, 199, busy);
    const node = fakeNode(chain);
    // DAI's first eth_getLogs is held until USDC has asked its next span, over the blocks DAI asks next
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let daiAsked!: () => void;
    const daiOut = new Promise<void>((resolve) => (daiAsked = resolve));
    const post = node.http.postJson.bind(node.http);
    let daiCalls = 0;
    node.http.postJson = async (body, context, options) => {
      const call = body as { method?: string; params?: [{ address: string[] }] };
      if (call.method === 'eth_getLogs' && call.params![0].address.includes(DAI) && daiCalls++ === 0) {
        daiAsked();
        await held;
      }
      return post(body, context, options);
    };
    const source = sourceOf(node, { startRange: 10 });
    const usdc1 = await source.fetchPage({ contract: USDC, fromBlock: 100, toBlock: 199, pageSize: 1000 });
    const dai = readAll(source, { contract: DAI, fromBlock: 100, toBlock: 199 });
    await daiOut;
    const usdc2 = await source.fetchPage({ contract: USDC, fromBlock: 100, toBlock: 199, pageSize: 1000, pageKey: usdc1.nextPageKey });
    // DAI's call is out over [190, 199], expected at 189 next: USDC's call there names USDC alone
    expect(addressesAsked(node).at(-1)).toEqual([USDC]);
    release();
    const rest = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 199 }, usdc2.nextPageKey);
    expect([...usdc1.transfers, ...usdc2.transfers, ...rest.rows]).toEqual(expectedRows(chain, USDC));
    expect((await dai).rows).toEqual(expectedRows(chain, DAI));
    // once DAI's logs per block are told, calls name both again
    expect(addressesAsked(node).some((a) => a.length === 2)).toBe(true);
  });

  it('names at most 50 contracts in a call', async () => {
    const many = Array.from({ length: 60 }, (_, i) => `0x${(0x1000 + i).toString(16).padStart(40, '0')}`);
    const chain = buildChain(100, 139, (n) => many.filter((_, i) => (n + i) % 7 === 0).map((address) => ({ address })));
    const node = fakeNode(chain);
    const source = sourceOf(node, { startRange: 5 });
    const read = await readTogether(source, many, 100, 139);
    for (const [i, r] of read.entries()) expect(r.rows).toEqual(expectedRows(chain, many[i]!));
    const sizes = addressesAsked(node).map((a) => a.length);
    expect(Math.max(...sizes)).toBe(50);
    expect(sizes.length).toBeLessThan(60 * 8);
  });

  it('asks a block that overflows for several contracts once per contract', async () => {
    // 3 USDC and 3 DAI transfers in block 105: 6 logs, over the cap of 4; each contract alone fits
    const chain = buildChain(100, 109, (n) => (n === 105 ? [1, 2, 3].flatMap(() => [{ address: USDC }, { address: DAI }]) : [{ address: USDC }, { address: DAI }]));
    const node = fakeNode(chain, { maxResults: 4 });
    const source = sourceOf(node, { startRange: 2 });
    const [usdc, dai] = await readTogether(source, [USDC, DAI], 100, 109);
    expect(usdc!.rows).toEqual(expectedRows(chain, USDC));
    expect(dai!.rows).toEqual(expectedRows(chain, DAI));
    const logsCalls = node.calls
      .filter((c) => c.method === 'eth_getLogs')
      .map((c) => ({ span: spanOf(c.params[0]), named: (c.params[0] as { address: string[] }).address.join() }));
    // each contract reads block 105 in a call naming it alone (USDC over that block, DAI over as many blocks as its own range holds)
    const aloneOver105 = logsCalls.filter((c) => !c.named.includes(',') && c.span[0] <= 105 && c.span[1] >= 105).map((c) => c.named);
    expect(aloneOver105).toContain(USDC);
    expect(aloneOver105).toContain(DAI);
    // asked together once (refused: 6 logs over the cap), and not again: the refusal is remembered for the block
    expect(logsCalls.filter((c) => c.named.includes(',') && c.span[0] === 105 && c.span[1] === 105).length).toBe(1);
  });
});

describe('createNodeSource: refusals', () => {
  it('follows a provider’s suggested range and asks again, at the top of what is left', async () => {
    const chain = buildChain(100, 199, busy);
    const node = fakeNode(chain, { maxResults: 30 });
    const source = sourceOf(node, { startRange: 100 });
    const { rows } = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 199 });
    expect(rows).toEqual(expectedRows(chain, USDC));
    const [refused, retried] = node.logsAsked();
    expect(refused).toEqual([100, 199]);
    // Infura suggested [100, 114] (15 blocks, 30 logs): the same size is asked below the top
    expect(retried).toEqual([185, 199]);
    expect(node.counters.logsRefused).toBeGreaterThanOrEqual(1);
    expect(node.counters.logsRefused).toBeLessThanOrEqual(node.logsAsked().length / 2);
    expect(source.learnedRange()).toBeLessThanOrEqual(15);
  });

  it('does not stretch a call past a stated block limit to leave no sliver of the query for a call of its own', async () => {
    const chain = buildChain(100, 165, busy);
    const node = fakeNode(chain, { answer: refusingOver(30, -32614, 'eth_getLogs is limited to a 30 range') });
    const source = sourceOf(node, { startRange: 100 });
    const { rows } = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 165 });
    expect(rows).toEqual(expectedRows(chain, USDC));
    // 6 blocks left below 106 are under a quarter of the range, but 36 blocks would pass the limit: a call of their own
    expect(node.logsAsked()).toEqual([
      [100, 165],
      [136, 165],
      [106, 135],
      [100, 105],
    ]);
    expect(node.counters.logsRefused).toBe(1);
  });

  it('does not stretch a call to leave no sliver of the query when the logs per block lately would put it over the target', async () => {
    const chain = buildChain(100, 192, busy);
    const node = fakeNode(chain, { maxResults: 40 });
    const source = sourceOf(node, { startRange: 100 });
    const { rows } = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 192 });
    expect(rows).toEqual(expectedRows(chain, USDC));
    // 2 logs a block, 40 at most an answer: the target is 28 logs, 14 blocks a call. The 3 blocks left below 103 are
    // under a quarter of the range, but [100, 116] would hold 34 logs, over 1.15 times the target: a call of their own
    expect(node.logsAsked().slice(-2)).toEqual([
      [103, 116],
      [100, 102],
    ]);
    expect(node.counters.logsRefused).toBe(1);
  });

  it('cuts a chunk’s last call at the query’s first block when the logs lately leave it no stretch', async () => {
    // 1 log a block, 3 in blocks 320–359: the last answers' busiest density stays 3 while the range grows back
    const banded = (n: number) => Array.from({ length: n >= 320 && n < 360 ? 3 : 1 }, () => ({ address: USDC }));
    const chain = buildChain(287, 399, banded);
    const node = fakeNode(chain, { maxResults: 40 });
    const source = sourceOf(node, { startRange: 100 });
    const { rows } = await readAll(source, { contract: USDC, fromBlock: 287, toBlock: 399 });
    expect(rows).toEqual(expectedRows(chain, USDC));
    // 13 blocks are left below 300: the range (14) reaches past 287, and 3 logs a block lately bar a stretch; the call
    // still stops at 287
    expect(node.logsAsked().at(-1)).toEqual([287, 299]);
    expect(node.logsAsked().every(([from]) => from >= 287)).toBe(true);
  });

  it('sends one query at a time until the node answers once, so a refusal teaches the queries read at once', async () => {
    const chain = buildChain(100, 239, busy);
    const node = fakeNode(chain, { answer: refusingOver(30, -32600, 'block range is too wide') });
    const source = sourceOf(node, { startRange: 100 });
    // two chunks read at once: the second waits for the first's refusal and answer, then asks 20 blocks
    const [usdc, dai] = await Promise.all([readAll(source, { contract: USDC, fromBlock: 100, toBlock: 139 }), readAll(source, { contract: DAI, fromBlock: 200, toBlock: 239 })]);
    expect(usdc.rows).toEqual(expectedRows(chain, USDC).filter((r) => r.blockNumber <= 139));
    expect(dai.rows).toEqual(expectedRows(chain, DAI).filter((r) => r.blockNumber >= 200));
    expect(node.logsAsked().slice(0, 3)).toEqual([
      [100, 139],
      [120, 139],
      [220, 239],
    ]);
    expect(node.counters.logsRefused).toBe(1);
  });

  it('keeps one query at a time after an answer cut short by a chunk’s end: it tells nothing of the range', async () => {
    const chain = buildChain(100, 339, busy);
    const node = fakeNode(chain, { answer: refusingOver(30, -32600, 'block range is too wide') });
    const source = sourceOf(node, { startRange: 100 });
    // a resumed chunk's last 5 blocks go first and are answered; the next chunk still goes alone
    await Promise.all([
      readAll(source, { contract: USDC, fromBlock: 335, toBlock: 339 }),
      readAll(source, { contract: DAI, fromBlock: 100, toBlock: 199 }),
      readAll(source, { contract: USDC, fromBlock: 200, toBlock: 299 }),
    ]);
    expect(node.logsAsked().slice(0, 4)).toEqual([
      [335, 339],
      [100, 199],
      [150, 199],
      [175, 199],
    ]);
  });

  it('halves a span whose suggested range covers most of it: the logs that overflow are near the top', async () => {
    const chain = buildChain(100, 199, (n) => (n >= 195 ? Array.from({ length: 10 }, () => ({ address: USDC })) : []));
    const node = fakeNode(chain, { maxResults: 30 });
    const source = sourceOf(node, { startRange: 100 });
    const { rows } = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 199 });
    expect(rows).toEqual(expectedRows(chain, USDC));
    // Infura suggests [100, 197] for [100, 199]: moved to the top, it would shed one block per call
    expect(node.logsAsked().slice(0, 3)).toEqual([
      [100, 199],
      [150, 199],
      [175, 199],
    ]);
    expect(node.counters.logsRefused).toBeLessThanOrEqual(6);
  });

  it('asks fewer blocks after an answer too large to read, as after a refusal for size', async () => {
    const chain = buildChain(100, 139, busy);
    const node = fakeNode(chain, { tooLargeOver: 30 });
    const source = sourceOf(node, { startRange: 40 });
    const { rows } = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 139 });
    expect(rows).toEqual(expectedRows(chain, USDC));
    expect(node.logsAsked()[0]).toEqual([100, 139]);
    expect(node.logsAsked()[1]).toEqual([120, 139]);
    expect(node.counters.logsRefused).toBeGreaterThanOrEqual(1);
  });

  it('asks fewer blocks, after a call that got no answer in time, with the timeout it was given', async () => {
    const chain = buildChain(100, 139, busy);
    const node = fakeNode(chain, { hangsOver: 8 });
    const source = sourceOf(node, { startRange: 40, rpcTimeoutMs: 1234 });
    const { rows } = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 139 });
    expect(rows).toEqual(expectedRows(chain, USDC));
    expect(node.logsAsked().slice(0, 3)).toEqual([
      [100, 139],
      [120, 139],
      [130, 139],
    ]);
    expect(node.calls.filter((c) => c.method === 'eth_getLogs').every((c) => c.options?.timeoutMs === 1234)).toBe(true);
  });

  it('fails naming the block, the contract and the provider’s message when one block alone is refused', async () => {
    const chain = buildChain(100, 103, () => Array.from({ length: 5 }, () => ({ address: USDC })));
    const source = sourceOf(fakeNode(chain, { maxResults: 3 }), { startRange: 4 });
    const error = await source.fetchPage({ contract: USDC, fromBlock: 100, toBlock: 103, pageSize: 10 }).catch((e: Error) => e);
    expect(isRetryable(error)).toBe(false);
    expect((error as Error).message).toMatch(new RegExp(`contract ${USDC} in block 103, even alone .*query returned more than 3 results`));
  });

  it('fails at once on an error that is not about size, and asks again after one that may pass', async () => {
    const chain = buildChain(100, 109, busy);
    const bad = fakeNode(chain, { answer: (m) => (m === 'eth_getLogs' ? { error: { code: -32602, message: 'invalid argument 0: hex string without 0x prefix' } } : undefined) });
    await expect(sourceOf(bad).fetchPage({ contract: USDC, fromBlock: 100, toBlock: 109, pageSize: 10 })).rejects.toThrow(/-32602 .*hex string without 0x prefix/);
    expect(bad.logsAsked()).toHaveLength(1);
    const lagging = fakeNode(chain, { answer: (m, _p, n) => (m === 'eth_getLogs' && n === 1 ? { error: { code: -32000, message: 'header not found' } } : undefined) });
    expect((await sourceOf(lagging).fetchPage({ contract: USDC, fromBlock: 100, toBlock: 109, pageSize: 10 })).count).toBe(20);
  });
});

describe('createNodeSource: logs that are not rows', () => {
  it('counts ERC-721 logs per contract, never stores them', async () => {
    const chain = buildChain(100, 109, (n) => [{ address: USDC }, ...(n % 2 ? [{ address: USDC, shape: 'erc721' as const }] : [])]);
    const source = sourceOf(fakeNode(chain));
    const { rows } = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 109 });
    expect(rows).toEqual(expectedRows(chain, USDC));
    expect(rows).toHaveLength(10);
    expect(source.skippedLogs()).toEqual(new Map([[USDC, { erc721: 5, other: 0 }]]));
  });

  it('asks a span again when its logs are marked removed, and fails retryably if the chain keeps moving', async () => {
    const chain = buildChain(100, 109, busy);
    const removedOnce = fakeNode(chain, {
      answer: (m, _p, n) => (m === 'eth_getLogs' && n === 1 ? { result: chain.logs.filter((l) => l.address === USDC).map((l, i) => ({ ...l, removed: i === 0 })) } : undefined),
    });
    const page = await sourceOf(removedOnce).fetchPage({ contract: USDC, fromBlock: 100, toBlock: 109, pageSize: 10 });
    expect(page.transfers).toEqual(expectedRows(chain, USDC));
    const alwaysRemoved = fakeNode(chain, { answer: (m) => (m === 'eth_getLogs' ? { result: [{ ...chain.logs[0]!, removed: true }] } : undefined) });
    const error = await sourceOf(alwaysRemoved)
      .fetchPage({ contract: USDC, fromBlock: 100, toBlock: 109, pageSize: 10 })
      .catch((e: Error) => e);
    expect((error as Error).message).toMatch(/marked removed .*reorganized under the query.*gave up after 6 attempts/s);
    expect(alwaysRemoved.logsAsked()).toHaveLength(6);
  });
});

describe('createNodeSource: headers', () => {
  it('checks headers by the hash rule of the chain it is given (chain 1 when none), and reads pages whatever the verdict', async () => {
    const chain = buildChain(100, 104, busy);
    const header = [...chain.headers.values()][0]!;
    const expected = { hash: header.hash!, number: Number(header.number), timestamp: new Date(Number(header.timestamp) * 1000).toISOString() };
    const plain = sourceOf(fakeNode(chain));
    expect(plain.checks?.chain).toBe(1);
    expect(plain.checks?.checkHeader(header, expected)).toMatchObject({ hashVerified: true, unverifiedReason: null });
    const other = sourceOf(fakeNode(chain), { chain: 999_999 });
    expect(other.checks?.chain).toBe(999_999);
    expect(other.checks?.checkHeader(header, expected)).toMatchObject({ hashVerified: false, unverifiedReason: expect.stringContaining('chain 999999') });
    // a header that cannot be verified still gives its block's time and bloom: what becomes of it is the run's to say
    const { rows } = await readAll(other, { contract: USDC, fromBlock: 100, toBlock: 104 });
    expect(rows).toEqual(expectedRows(chain, USDC));
  });

  it('fetches each block’s header once, in batches, and serves headersByHash from what it fetched', async () => {
    const chain = buildChain(100, 139, busy);
    const node = fakeNode(chain);
    const source = sourceOf(node, { headerBatchSize: 7 });
    const usdc = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 139 });
    const dai = await readAll(source, { contract: DAI, fromBlock: 100, toBlock: 139 });
    expect(node.counters.headerCalls).toBe(40);
    const hashes = [...new Set([...usdc.rows, ...dai.rows].map((t) => t.blockHash))];
    const served = await source.headersByHash(hashes);
    expect(node.counters.headerCalls).toBe(40);
    expect([...served.values()]).toEqual(hashes.map((hash) => chain.headers.get(hash)));
    expect(source.headerBatchSize).toBe(7);
    // a block no page needed is asked of the node
    const unknown = `0x${'ee'.repeat(32)}`;
    expect((await source.headersByHash([unknown])).get(unknown)).toBeNull();
    expect(node.counters.headerCalls).toBe(41);
  });

  it('takes the times and blooms of blocks the warehouse holds from it, and asks the node only for the others', async () => {
    const chain = buildChain(100, 139, busy);
    const node = fakeNode(chain);
    const stored = [...chain.headers.values()].filter((h) => Number(h.number) < 120);
    const asked: string[][] = [];
    // blocks asked with another number than their logs give them (the source catches a throw here: kept, asserted after)
    const misnumbered: unknown[] = [];
    const storedHeaders = async (blocks: readonly { hash: string; number: number }[]) => {
      for (const b of blocks) if (Number(chain.headers.get(b.hash)?.number) !== b.number) misnumbered.push(b);
      const hashes = blocks.map((b) => b.hash);
      asked.push(hashes);
      const facts = stored
        .filter((h) => hashes.includes(h.hash!))
        .map((h) => [h.hash!, { number: Number(h.number), seconds: String(Number(h.timestamp)), logsBloom: h.logsBloom! }] as const);
      return new Map(facts);
    };
    const source = sourceOf(node, { storedHeaders });
    const { rows } = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 139 });
    // the same rows, times and all, and only blocks 120-139 asked of the node
    expect(rows).toEqual(expectedRows(chain, USDC));
    expect(node.counters.headerCalls).toBe(20);
    expect(asked.length).toBeGreaterThan(0);
    expect(misnumbered).toEqual([]);
    // a page of another contract over the same blocks: everything is remembered now
    const before = asked.length;
    await readAll(source, { contract: DAI, fromBlock: 100, toBlock: 139 });
    expect(node.counters.headerCalls).toBe(20);
    expect(asked.length).toBe(before);
  });

  it('looks each block up in the warehouse once, and tells the pipeline which headers it fetched for a page', async () => {
    const chain = buildChain(100, 139, busy);
    const node = fakeNode(chain);
    const stored = new Set([...chain.headers.values()].filter((h) => Number(h.number) < 110).map((h) => h.hash!));
    const asked: string[] = [];
    const source = sourceOf(node, {
      storedHeaders: async (blocks) => {
        asked.push(...blocks.map((b) => b.hash));
        const found = [...chain.headers.values()].filter((h) => stored.has(h.hash!) && blocks.some((b) => b.hash === h.hash));
        return new Map(found.map((h) => [h.hash!, { number: Number(h.number), seconds: String(Number(h.timestamp)), logsBloom: h.logsBloom! }] as const));
      },
    });
    const { pages, rows } = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 139 });
    expect(rows).toEqual(expectedRows(chain, USDC));
    const blocks = new Set(rows.map((t) => t.blockHash));
    expect(asked.length).toBe(new Set(asked).size);
    expect(new Set(asked)).toEqual(blocks);
    // the headers fetched are those the warehouse lacked, each told with the page it came for
    const fetched = pages.flatMap((p) => [...(p.headersFetched ?? [])]);
    expect(fetched.length).toBe(new Set(fetched).size);
    expect(new Set(fetched)).toEqual(new Set([...blocks].filter((hash) => !stored.has(hash))));
    for (const page of pages) for (const hash of page.headersFetched ?? []) expect(page.transfers.some((t) => t.blockHash === hash)).toBe(true);
    expect(node.counters.headerCalls).toBe(fetched.length);
  });

  it('names the headers it fetched in every page over their blocks, whichever page checked them, until the pipeline takes them', async () => {
    const chain = buildChain(100, 119, busy);
    const node = fakeNode(chain);
    const source = sourceOf(node, { storedHeaders: async () => new Map() });
    const [usdc, dai] = await Promise.all([
      source.fetchPage({ contract: USDC, fromBlock: 100, toBlock: 119, pageSize: 1000 }),
      source.fetchPage({ contract: DAI, fromBlock: 100, toBlock: 119, pageSize: 1000 }),
    ]);
    // each block's header fetched once, for the page read first; the other page found them checked
    expect(node.counters.headerCalls).toBe(20);
    for (const page of [usdc, dai]) expect(page.headersFetched).toEqual(new Set(page.transfers.map((t) => t.blockHash)));
    // once the pipeline has taken a block's header, a later page of it no longer names it
    const taken = [...usdc.headersFetched!].slice(0, 5);
    await source.headersByHash(taken);
    const again = await source.fetchPage({ contract: USDC, fromBlock: 100, toBlock: 119, pageSize: 1000 });
    expect([...again.headersFetched!].filter((hash) => taken.includes(hash))).toEqual([]);
    expect(again.headersFetched!.size).toBe(15);
  });

  it('asks no header twice when another page checked its block while the warehouse answered, and the pipeline took it', async () => {
    const chain = buildChain(100, 109, busy);
    const node = fakeNode(chain);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const gated = new Promise<void>((resolve) => (reached = resolve));
    let calls = 0;
    const source = sourceOf(node, {
      storedHeaders: async () => {
        // the first question (DAI's answer) waits until USDC's page is done and its headers taken
        if (calls++ === 0) {
          reached();
          await gate;
        }
        return new Map();
      },
    });
    const dai = source.fetchPage({ contract: DAI, fromBlock: 100, toBlock: 109, pageSize: 1000 });
    await gated;
    const usdc = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 109 });
    expect(node.counters.headerCalls).toBe(10);
    await source.headersByHash([...new Set(usdc.rows.map((t) => t.blockHash))]);
    release();
    const page = await dai;
    // the page's blocks, newest first: the span the call covered
    const bottom = page.nextPageKey === undefined ? 100 : Number(page.nextPageKey.slice('node:'.length)) + 1;
    expect(page.transfers).toEqual(expectedRows(chain, DAI).filter((t) => t.blockNumber >= bottom));
    expect(page.transfers.length).toBeGreaterThan(0);
    expect(node.counters.headerCalls).toBe(10);
  });

  it('asks the node when a stored header disagrees with the logs on the block number, or the warehouse cannot answer', async () => {
    const chain = buildChain(100, 109, busy);
    const wrongNumber = sourceOf(fakeNode(chain), {
      storedHeaders: async (blocks) => new Map(blocks.map(({ hash }) => [hash, { number: 1, seconds: '0', logsBloom: `0x${'00'.repeat(256)}` }] as const)),
    });
    expect((await readAll(wrongNumber, { contract: USDC, fromBlock: 100, toBlock: 109 })).rows).toEqual(expectedRows(chain, USDC));
    const node = fakeNode(chain);
    const warned: unknown[] = [];
    const failing = sourceOf(node, {
      storedHeaders: () => Promise.reject(new Error('connection terminated')),
      logger: { debug: () => undefined, warn: (o: unknown) => void warned.push(o) },
    });
    expect((await readAll(failing, { contract: USDC, fromBlock: 100, toBlock: 109 })).rows).toEqual(expectedRows(chain, USDC));
    expect(node.counters.headerCalls).toBe(10);
    expect(warned[0]).toMatchObject({ msg: 'could not read the stored headers; asking the node for them', err: 'connection terminated' });
  });

  it('asks a node whether it has erigon_getHeaderByHash with single calls, not batches; without it, reads each header once by eth_getBlockByHash, keeping the header fields only', async () => {
    const chain = buildChain(100, 119, busy);
    const node = fakeNode(chain, { erigon: false });
    const source = sourceOf(node, { startRange: 10 });
    // two contracts' pages at once: their first header batches wait for the one answer
    const [{ rows }] = await Promise.all([readAll(source, { contract: USDC, fromBlock: 100, toBlock: 119 }), readAll(source, { contract: DAI, fromBlock: 100, toBlock: 119 })]);
    expect(rows).toEqual(expectedRows(chain, USDC));
    // at most one single call per reader whose batch started before the answer (here the two contracts' pages)
    expect(node.calls.filter((c) => c.method === 'erigon_getHeaderByHash').length).toBeLessThanOrEqual(2);
    expect(node.calls.filter((c) => c.method === 'eth_getBlockByHash').map((c) => c.params[1])).toEqual(Array(20).fill(false));
    const [hash, header] = [...chain.headers][0]!;
    expect((await source.headersByHash([hash])).get(hash)).toEqual(header);
    expect(await source.supportsErigon()).toBe(false);
  });

  it('reads a -32601 that comes with an HTTP error status (a 403 or 501 some providers give) as no erigon_getHeaderByHash too', async () => {
    const chain = buildChain(100, 109, busy);
    const node = fakeNode(chain, { erigon: false });
    const post = node.http.postJson.bind(node.http);
    node.http.postJson = async (body, context, options) => {
      if (!Array.isArray(body) && (body as { method: string }).method === 'erigon_getHeaderByHash') {
        throw new HttpStatusError('not allowed', 'POST node', { status: 403, apiCode: -32601, apiMessage: 'method not whitelisted' });
      }
      return post(body, context, options);
    };
    const source = sourceOf(node);
    const { rows } = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 109 });
    expect(rows).toEqual(expectedRows(chain, USDC));
    expect(await source.supportsErigon()).toBe(false);
    expect(node.calls.filter((c) => c.method === 'eth_getBlockByHash')).toHaveLength(10);
  });

  it('halves its header batches while the node refuses them', async () => {
    const chain = buildChain(100, 139, busy);
    const node = fakeNode(chain, { batchLimit: 4 });
    const source = sourceOf(node, { headerBatchSize: 10 });
    const { rows } = await readAll(source, { contract: USDC, fromBlock: 100, toBlock: 139 });
    expect(rows).toEqual(expectedRows(chain, USDC));
    // the first block asked alone (settling erigon_getHeaderByHash), the other 9 refused: halved to 4, the node's limit
    expect(source.headerBatchSize).toBe(4);
    expect(node.calls.filter((c) => c.method === 'erigon_getHeaderByHash')).toHaveLength(40);
  });

  it('fails a transfer its block’s bloom rules out, naming transaction, log, contract, block and what is missing', async () => {
    const victim = (log: RawLog) => log.blockNumber === quantity(105) && log.logIndex === '0x1';
    const chain = buildChain(100, 109, (n) => [{ address: USDC }, { address: USDC }, ...(n === 105 ? [] : [])], victim);
    const node = fakeNode(chain);
    const error = await sourceOf(node)
      .fetchPage({ contract: USDC, fromBlock: 100, toBlock: 109, pageSize: 10 })
      .catch((e: Error) => e);
    expect(error).toBeInstanceOf(BadResponseError);
    const log = chain.logs.find(victim)!;
    expect((error as BadResponseError).problems).toEqual([
      expect.stringMatching(
        new RegExp(`^transaction ${log.transactionHash}, log 1, contract ${USDC}, block 105 \\(${log.blockHash}\\): the block header's logsBloom rules out its (from|to) topic`),
      ),
    ]);
    expect(isRetryable(error)).toBe(false);
  });

  it('fails a log whose own block time disagrees with its header’s', async () => {
    const chain = buildChain(100, 101, busy);
    const node = fakeNode(chain, {
      answer: (m) => (m === 'eth_getLogs' ? { result: chain.logs.filter((l) => l.address === USDC).map((l) => ({ ...l, blockTimestamp: quantity(TIME_BASE) })) } : undefined),
    });
    await expect(sourceOf(node).fetchPage({ contract: USDC, fromBlock: 100, toBlock: 101, pageSize: 10 })).rejects.toThrow(/block 101, log 1, blockTimestamp: expected 0x/);
  });
});

describe('createNodeSource: chain and tokens', () => {
  it('tells the head by eth_blockNumber and the chain id', async () => {
    const source = sourceOf(fakeNode(buildChain(100, 109, busy)));
    expect(await source.chainHead([USDC])).toEqual({ head: 109, from: 'eth_blockNumber' });
    expect(await source.chainId()).toBe(31337);
  });

  it('reads token metadata from string and bytes32 answers; a revert, 0x or decimals over 255 are unknown; each asked once', async () => {
    const abiString = (text: string) => {
      const bytes = Buffer.from(text, 'utf8');
      return `0x${word(32)}${word(bytes.length)}${Buffer.concat([bytes, Buffer.alloc(31 - ((bytes.length + 31) % 32))]).toString('hex')}`;
    };
    const answers: Record<string, Record<string, unknown>> = {
      [USDC]: { '0x06fdde03': { result: abiString('USD Coin') }, '0x95d89b41': { result: abiString('USDC') }, '0x313ce567': { result: `0x${word(6)}` } },
      [DAI]: { '0x06fdde03': { result: `0x4d616b6572${'00'.repeat(27)}` }, '0x95d89b41': { result: `0x4d4b52${'00'.repeat(29)}` }, '0x313ce567': { result: `0x${word(18)}` } },
      [NFT]: { '0x06fdde03': { error: { code: -32000, message: 'execution reverted' } }, '0x95d89b41': { result: '0x' }, '0x313ce567': { result: `0x${word(256)}` } },
    };
    const node = fakeNode(buildChain(100, 100, busy), {
      answer: (m, p) => {
        const call = p[0] as { to: string; data: string };
        return m === 'eth_call' ? answers[call.to]![call.data] : undefined;
      },
    });
    const source = sourceOf(node);
    expect(await source.tokenMetadata(USDC)).toEqual({ contractAddress: USDC, name: 'USD Coin', symbol: 'USDC', decimals: 6 });
    expect(await source.tokenMetadata(DAI)).toEqual({ contractAddress: DAI, name: 'Maker', symbol: 'MKR', decimals: 18 });
    expect(await source.tokenMetadata(NFT)).toEqual({ contractAddress: NFT, name: null, symbol: null, decimals: null });
    await source.tokenMetadata(USDC);
    expect(node.calls.filter((c) => c.method === 'eth_call')).toHaveLength(9);
    expect(node.calls.find((c) => c.method === 'eth_call')!.params[1]).toBe('latest');
  });

  it('decodes what getters answer by hand: UTF-8 strings, bytes32 up to the first zero byte, unreadable answers as unknown', () => {
    const utf8 = Buffer.from('Éther ✓', 'utf8');
    expect(decodeTextResult(`0x${word(32)}${word(utf8.length)}${utf8.toString('hex').padEnd(64, '0')}`)).toBe('Éther ✓');
    expect(decodeTextResult(`0x${word(32)}${word(0)}`)).toBeNull();
    expect(decodeTextResult(`0x${word(32)}${word(40)}${'41'.repeat(32)}`)).toBeNull();
    expect(decodeTextResult(`0x${'ff'.repeat(32)}`)).toBeNull();
    expect(decodeTextResult('0x')).toBeNull();
    expect(decodeDecimalsResult(`0x${word(255)}`)).toBe(255);
    expect(decodeDecimalsResult('0x12')).toBeNull();
  });
});
