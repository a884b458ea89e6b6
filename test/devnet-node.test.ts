import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, parseAbi, parseAbiItem, RpcRequestError, type Log, type PublicClient } from 'viem';
import { mainnet } from 'viem/chains';
import { readDataset } from '../src/dataset/read.ts';
import type { Dataset, TransferRecord } from '../src/dataset/types.ts';
import { syntheticForeignLogs } from '../src/devnet/foreign-logs.ts';
import { readServedDataset } from '../src/devnet/served-dataset.ts';
import type { LogsErrorStyle } from '../src/devnet/logs-limit-errors.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from '../src/devnet/synthetic.ts';
import { systemClock } from '../src/common/clock.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';
import { closedAfterEach, getTransfers, type RunningDevnet, startDevnet } from './helpers/devnet.ts';

// viem, a client nobody here wrote, reads the reference server as it reads any node: eth_getLogs, blocks, eth_call.
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
const ERC20 = parseAbi(['function name() view returns (string)', 'function symbol() view returns (string)', 'function decimals() view returns (uint8)']);
const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const USDT = '0xdac17f958d2ee523a2206206994597c13d831ec7';

const clientOf = (base: string, options: { timeout?: number; batch?: boolean } = {}): PublicClient =>
  createPublicClient({ chain: mainnet, transport: http(base, { retryCount: 0, ...options }) }) as PublicClient;

/** A transfer row as a log decodes to it: the fields an ERC-20 log carries, lower case. */
const rowOf = (t: TransferRecord) => ({
  contractAddress: t.contractAddress,
  fromAddress: t.fromAddress,
  toAddress: t.toAddress,
  value: t.value,
  blockHash: t.blockHash,
  blockNumber: t.blockNumber,
  blockTimestamp: Date.parse(t.blockTimestamp) / 1000,
  transactionHash: t.transactionHash,
  transactionIndex: t.transactionIndex,
  logIndex: t.logIndex,
});
const decoded = (log: Log<bigint, number, false, typeof TRANSFER, true>) => ({
  contractAddress: log.address.toLowerCase(),
  fromAddress: log.args.from.toLowerCase(),
  toAddress: log.args.to.toLowerCase(),
  value: log.args.value.toString(),
  blockHash: log.blockHash,
  blockNumber: Number(log.blockNumber),
  blockTimestamp: Number(log.blockTimestamp),
  transactionHash: log.transactionHash,
  transactionIndex: log.transactionIndex,
  logIndex: log.logIndex,
});
const chainOrder = (a: TransferRecord, b: TransferRecord) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex;
const isErc20Shape = (log: { topics: readonly unknown[]; data: string }) => log.topics.length === 3 && log.data.length === 66;

/** The JSON-RPC error under whatever viem wrapped it in: the code and message the server sent, and the HTTP status unless 200. */
async function rpcError(promise: Promise<unknown>): Promise<{ code: number; message: string; status?: number | undefined }> {
  const err = await promise.then(
    () => {
      throw new Error('expected an error');
    },
    (e: unknown) => e as Error & { walk(fn: (e: unknown) => boolean): unknown },
  );
  const cause = err.walk((e) => e instanceof RpcRequestError) as RpcRequestError | null;
  if (!cause) throw err;
  return { code: cause.code, message: cause.details, ...(cause.status !== undefined && { status: cause.status }) };
}

describe('viem against the reference server: the mainnet fixture', () => {
  let dataset: Dataset;
  let devnet: RunningDevnet;
  beforeAll(async () => {
    dataset = await readDataset(FIXTURE_DIR);
    devnet = await startDevnet(dataset);
  });
  afterAll(() => devnet.close());

  it('getLogs of the Transfer event over the whole chain is every transfer row, decoded, in chain order', async () => {
    const logs = await clientOf(devnet.base).getLogs({ event: TRANSFER, fromBlock: 'earliest', toBlock: 'latest', strict: true });
    expect(logs.every((l) => !l.removed && isErc20Shape(l))).toBe(true);
    expect(logs.map(decoded)).toEqual([...dataset.transfers].sort(chainOrder).map(rowOf));
  });

  it('getLogs filters by several addresses, by a topic, and by block hash', async () => {
    const client = clientOf(devnet.base);
    const rows = dataset.transfers.filter((t) => t.contractAddress === WETH || t.contractAddress === USDT).sort(chainOrder);
    const both = await client.getLogs({ address: [WETH, USDT], event: TRANSFER, fromBlock: 0n, toBlock: 'latest', strict: true });
    expect(both.map(decoded)).toEqual(rows.map(rowOf));
    const sender = rows[0]!.fromAddress;
    const fromOne = await client.getLogs({ event: TRANSFER, args: { from: sender as `0x${string}` }, fromBlock: 0n, toBlock: 'latest', strict: true });
    expect(fromOne.map(decoded)).toEqual(
      dataset.transfers
        .filter((t) => t.fromAddress === sender)
        .sort(chainOrder)
        .map(rowOf),
    );
    const block = rows[0]!;
    const inBlock = await client.getLogs({ event: TRANSFER, blockHash: block.blockHash as `0x${string}`, strict: true });
    expect(inBlock.map(decoded)).toEqual(
      dataset.transfers
        .filter((t) => t.blockHash === block.blockHash)
        .sort(chainOrder)
        .map(rowOf),
    );
  });

  it('getChainId, getBlock by hash, by number and by tag: the header as the dataset holds it', async () => {
    const client = clientOf(devnet.base);
    expect(await client.getChainId()).toBe(1);
    const header = dataset.headers.find((h) => h.number === '0x12c135c')!;
    const byHash = await client.getBlock({ blockHash: header.hash as `0x${string}` });
    expect(byHash.hash).toBe(header.hash);
    expect(byHash.stateRoot).toBe(header.stateRoot);
    expect((await client.getBlock({ blockNumber: 19_665_756n })).hash).toBe(header.hash);
    expect((await client.getBlock({ blockTag: 'latest' })).number).toBe(19_900_000n);
    expect((await client.getBlock({ blockTag: 'earliest' })).number).toBe(0n);
    const raw = await client.request({ method: 'eth_getBlockByHash', params: [header.hash as `0x${string}`, false] });
    expect(raw).toEqual({ ...header, transactions: [], uncles: [] });
  });

  it('readContract of name, symbol and decimals answers the dataset’s token metadata', async () => {
    const client = clientOf(devnet.base);
    const read = (address: string, functionName: 'name' | 'symbol' | 'decimals') => client.readContract({ address: address as `0x${string}`, abi: ERC20, functionName });
    expect([await read(WETH, 'name'), await read(WETH, 'symbol'), await read(WETH, 'decimals')]).toEqual(['Wrapped Ether', 'WETH', 18]);
    expect([await read(USDT, 'name'), await read(USDT, 'symbol'), await read(USDT, 'decimals')]).toEqual(['Tether USD', 'USDT', 6]);
  });

  it('batches node methods through one HTTP request', async () => {
    const client = clientOf(devnet.base, { batch: true });
    const before = (await devnet.stats()).rpcHttpRequests;
    const [chainId, block, logs] = await Promise.all([
      client.getChainId(),
      client.getBlock({ blockHash: dataset.headers[3]!.hash as `0x${string}` }),
      client.getLogs({ address: WETH, event: TRANSFER, fromBlock: 0n, toBlock: 'latest' }),
    ]);
    expect([chainId, block.hash, logs.length]).toEqual([1, dataset.headers[3]!.hash, dataset.transfers.filter((t) => t.contractAddress === WETH).length]);
    expect((await devnet.stats()).rpcHttpRequests - before).toBe(1);
  });
});

describe('viem against the reference server: the synthetic chain', () => {
  const options = { ...SYNTHETIC_DEFAULTS, blocks: 400, transfers: 4000 };
  const dataset = generateSyntheticDataset(options);
  const foreign = syntheticForeignLogs(options);
  let devnet: RunningDevnet;
  beforeAll(async () => {
    devnet = await startDevnet(dataset, { chainId: 31337 }, systemClock, foreign);
  });
  afterAll(() => devnet.close());

  it('getLogs of the Transfer topic holds every ERC-20 row exactly, and the chain’s other Transfer-topic logs besides', async () => {
    const client = clientOf(devnet.base);
    const all = await client.request({ method: 'eth_getLogs', params: [{ fromBlock: 'earliest', toBlock: 'latest', topics: [TRANSFER_TOPIC] }] });
    expect(all).toHaveLength(dataset.transfers.length + foreign.length);
    expect(all.filter((l) => l.topics.length === 4 && l.data === '0x').length).toBeGreaterThan(0);
    expect(all.filter((l) => l.topics.length === 1).length).toBeGreaterThan(0);
    expect(all.filter((l) => l.topics.length === 3 && l.data.length === 2 + 128).length).toBeGreaterThan(0);
    const erc20 = await client.getLogs({ event: TRANSFER, fromBlock: 'earliest', toBlock: 'latest', strict: true });
    expect(erc20.filter(isErc20Shape).map(decoded)).toEqual(dataset.transfers.map(rowOf));
    const keys = all.map((l) => `${l.blockNumber}/${l.logIndex}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('a filter by the dataset’s ERC-20 contracts leaves the other logs out; the builder API never answers them', async () => {
    const contracts = [...new Set(dataset.transfers.map((t) => t.contractAddress))] as `0x${string}`[];
    const logs = await clientOf(devnet.base).getLogs({ address: contracts, event: TRANSFER, fromBlock: 'earliest', toBlock: 'latest', strict: true });
    expect(logs.map(decoded)).toEqual(dataset.transfers.map(rowOf));
    const nft = foreign.find((l) => l.topics.length === 4)!.address;
    const page = (await getTransfers(devnet.base, { contractAddress: nft })).body as { count: number };
    expect(page.count).toBe(0);
  });

  it('answers the chain id it was started with, and the awkward tokens’ metadata', async () => {
    const client = clientOf(devnet.base);
    expect(await client.getChainId()).toBe(31337);
    const [first, second] = dataset.tokens;
    expect(await client.readContract({ address: first!.contractAddress as `0x${string}`, abi: ERC20, functionName: 'name' })).toBe('Éther Synthétique ✓');
    expect(await client.readContract({ address: second!.contractAddress as `0x${string}`, abi: ERC20, functionName: 'symbol' })).toBe('SUSD');
  });

  it('a token without metadata reverts for some getters and answers no data for the others', async () => {
    const client = clientOf(devnet.base);
    const listed = new Set(dataset.tokens.map((t) => t.contractAddress));
    const unknown = dataset.transfers.find((t) => !listed.has(t.contractAddress))!.contractAddress as `0x${string}`;
    const outcomes = await Promise.all(
      (['name', 'symbol', 'decimals'] as const).map((functionName) =>
        client.readContract({ address: unknown, abi: ERC20, functionName }).then(
          () => 'answered',
          (e: Error) => e.name,
        ),
      ),
    );
    expect(outcomes).not.toContain('answered');
    expect(new Set(outcomes)).toEqual(new Set(['ContractFunctionExecutionError']));
    const calls = await Promise.all(
      ['0x06fdde03', '0x95d89b41'].map((data) =>
        client.request({ method: 'eth_call', params: [{ to: unknown, data: data as `0x${string}` }, 'latest'] }).then(
          (result) => result,
          (e: Error) => e.message,
        ),
      ),
    );
    expect(calls).toContain('0x');
    expect(calls.some((c) => /execution reverted/.test(c))).toBe(true);
  });
});

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

describe('provider behaviour chosen by flags', () => {
  let dataset: Dataset;
  beforeAll(async () => {
    dataset = await readDataset(FIXTURE_DIR);
  });
  const later = closedAfterEach();
  const serve = async (config: Parameters<typeof startDevnet>[1]) => {
    const devnet = await startDevnet(dataset, config);
    later(() => devnet.close());
    return devnet;
  };
  // the fixture's busiest block
  const busiest = () => {
    const counts = new Map<number, number>();
    for (const t of dataset.transfers) counts.set(t.blockNumber, (counts.get(t.blockNumber) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1])[0]!;
  };
  const hex = (n: number) => `0x${n.toString(16)}` as `0x${string}`;

  const SHAPES: Record<LogsErrorStyle, { range: [number, RegExp]; results: [number, RegExp] }> = {
    infura: {
      range: [-32602, /^range 19900001 exceeds limit of 1000$/],
      results: [-32005, /^query returned more than 50 results\. Try with this block range \[0x[0-9a-f]+, 0x[0-9a-f]+\]\.$/],
    },
    alchemy: {
      range: [-32602, /^Log response size exceeded\. .* up to a 1K block range .* cap of 50 logs .* this block range should work: \[0x0, 0x3e7\]$/],
      results: [-32602, /^Log response size exceeded\. .* this block range should work: \[0x[0-9a-f]+, 0x[0-9a-f]+\]$/],
    },
    quicknode: { range: [-32614, /^eth_getLogs is limited to a 1,000 range$/], results: [-32614, /^eth_getLogs is limited to 50 results$/] },
    ankr: { range: [-32600, /^block range is too wide$/], results: [-32600, /^block range is too wide$/] },
    reth: { range: [-32602, /^query exceeds max block range 1000$/], results: [-32602, /^query exceeds max results 50, retry with the range \d+-\d+$/] },
    arbitrum: { range: [-32000, /^logs matched by query exceeds limit of 1000$/], results: [-32000, /^logs matched by query exceeds limit of 50$/] },
  };

  for (const [style, shape] of Object.entries(SHAPES) as [LogsErrorStyle, (typeof SHAPES)[LogsErrorStyle]][]) {
    it(`--logs-error-style ${style}: a range over the cap, then more logs than the cap, answer ${style}’s code and message`, async () => {
      const devnet = await serve({ logsLimits: { maxRange: 1000, maxResults: 50, style } });
      const client = clientOf(devnet.base);
      const wide = await rpcError(client.request({ method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: 'latest', topics: [TRANSFER_TOPIC] }] }));
      expect(wide.code).toBe(shape.range[0]);
      expect(wide.message).toMatch(shape.range[1]);
      const [block, count] = busiest();
      expect(count).toBeGreaterThan(50);
      const full = await rpcError(client.request({ method: 'eth_getLogs', params: [{ fromBlock: hex(block), toBlock: hex(block) }] }));
      expect(full.code).toBe(shape.results[0]);
      expect(full.message).toMatch(shape.results[1]);
    });
  }

  it('a suggested range fits under the cap: Infura’s, then reth’s, equal to the range asked when one block overflows', async () => {
    const [block] = busiest();
    const infura = await serve({ logsLimits: { maxResults: 50, style: 'infura' } });
    const asked = { fromBlock: hex(block - 500), toBlock: hex(block + 500) };
    const error = await rpcError(clientOf(infura.base).request({ method: 'eth_getLogs', params: [asked] }));
    const [from, to] = /\[(0x[0-9a-f]+), (0x[0-9a-f]+)\]/.exec(error.message)!.slice(1).map(Number);
    expect(from).toBe(block - 500);
    expect(to).toBe(block - 1);
    const fits = await clientOf(infura.base).request({ method: 'eth_getLogs', params: [{ fromBlock: hex(from!), toBlock: hex(to!) }] });
    expect(fits.length).toBeLessThanOrEqual(50);
    const reth = await serve({ logsLimits: { maxResults: 50, style: 'reth' } });
    const single = await rpcError(clientOf(reth.base).request({ method: 'eth_getLogs', params: [{ fromBlock: hex(block), toBlock: hex(block) }] }));
    expect(single.message).toBe(`query exceeds max results 50, retry with the range ${block}-${block}`);
  });

  it('--no-erigon refuses erigon_getHeaderByHash with -32601, and still answers eth_getBlockByHash', async () => {
    const devnet = await serve({ erigon: false });
    const client = clientOf(devnet.base);
    const hash = dataset.headers[4]!.hash as `0x${string}`;
    const refused = await rpcError(client.request({ method: 'erigon_getHeaderByHash' as never, params: [hash] as never }));
    expect(refused).toMatchObject({ code: -32601, message: 'the method erigon_getHeaderByHash does not exist/is not available' });
    expect((await client.getBlock({ blockHash: hash })).hash).toBe(hash);
  });

  it('--logs-hang-rate leaves an eth_getLogs over several blocks unanswered; one block, and other methods, still answer', async () => {
    const devnet = await serve({ faults: { logsHangRate: 1 } });
    const client = clientOf(devnet.base, { timeout: 400 });
    const [block] = busiest();
    const started = performance.now();
    const hung = await client.getLogs({ event: TRANSFER, fromBlock: BigInt(block - 1), toBlock: BigInt(block) }).catch((e: Error) => e);
    expect((hung as Error).name).toBe('TimeoutError');
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    const one = await client.getLogs({ event: TRANSFER, fromBlock: BigInt(block), toBlock: BigInt(block) });
    expect(one.length).toBe(busiest()[1]);
    expect(await client.getChainId()).toBe(1);
    const stats = await devnet.stats();
    expect(stats.errors).toMatchObject({ hang: 1 });
    expect(stats.rpcOutcomes).toEqual({ eth_getLogs: { answered: 1, refused: { hang: 1 } }, eth_chainId: { answered: 1, refused: {} } });
    expect(stats.logsServed).toBe(one.length);
  });

  it('/__stats counts eth_getLogs answered and refused by cap, and the logs served, apart from an eth_call revert of the same code', async () => {
    // arbitrum refuses both caps with -32000, which is also what a reverting eth_call answers
    const devnet = await serve({ logsLimits: { maxRange: 1000, maxResults: 50, style: 'arbitrum' } });
    const client = clientOf(devnet.base);
    const [block, count] = busiest();
    const wide = await rpcError(client.request({ method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: 'latest', topics: [TRANSFER_TOPIC] }] }));
    const full = await rpcError(client.request({ method: 'eth_getLogs', params: [{ fromBlock: hex(block), toBlock: hex(block) }] }));
    // two blocks of a few transfers each, answered
    const few = [...new Set(dataset.transfers.map((t) => t.blockNumber))].filter((b) => dataset.transfers.filter((t) => t.blockNumber === b).length <= 5).slice(0, 2);
    const answers = await Promise.all(few.map((b) => client.request({ method: 'eth_getLogs', params: [{ fromBlock: hex(b), toBlock: hex(b), topics: [TRANSFER_TOPIC] }] })));
    const reverted = await rpcError(client.request({ method: 'eth_call', params: [{ to: WETH, data: '0x12345678' }, 'latest'] }));
    expect([wide.code, full.code, reverted.code]).toEqual([-32000, -32000, -32000]);
    expect(count).toBeGreaterThan(50);
    const stats = await devnet.stats();
    expect(stats.errors).toEqual({ '-32000': 3 });
    expect(stats.rpcOutcomes).toEqual({
      eth_getLogs: { answered: 2, refused: { rangeCap: 1, resultsCap: 1 } },
      eth_call: { answered: 0, refused: { reverted: 1 } },
    });
    expect(stats.logsServed).toBe(answers[0]!.length + answers[1]!.length);
    expect(stats.logsServed).toBeGreaterThan(0);
  });

  it('the existing fault flags apply to the node methods: --fail-rate, --rate-limit', async () => {
    const failing = await serve({ faults: { failRate: 1 } });
    const failed = await rpcError(clientOf(failing.base).getLogs({ event: TRANSFER, fromBlock: 0n, toBlock: 'latest' }));
    expect(failed.code).toBe(-32603);
    expect([500, 502, 503]).toContain(failed.status);
    const limited = await serve({ rateLimit: 1 });
    const client = clientOf(limited.base);
    await client.getChainId();
    const refused = await rpcError(client.request({ method: 'eth_getBlockByNumber', params: ['latest', false] }));
    expect(refused).toEqual({ code: -32097, message: 'rate limit reached', status: 429 });
  });
});

describe('a dataset of headers only, from another chain family', () => {
  // an Arbitrum Nitro block as its node answers eth_getBlockByNumber: keys Ethereum headers lack, transaction hashes
  const nitro = {
    baseFeePerGas: '0x989680',
    difficulty: '0x1',
    extraData: `0x${'53'.repeat(32)}`,
    gasLimit: '0x4000000000000',
    gasUsed: '0x1560d7',
    hash: `0x${'1d'.repeat(32)}`,
    l1BlockNumber: '0x16dd9f1',
    logsBloom: `0x${'00'.repeat(256)}`,
    miner: '0xa4b000000000000000000073657175656e636572',
    mixHash: `0x${'00'.repeat(32)}`,
    nonce: '0x0000000000221739',
    number: '0x185eef3d',
    parentHash: `0x${'9c'.repeat(32)}`,
    receiptsRoot: `0x${'b5'.repeat(32)}`,
    sendCount: '0x25f60',
    sendRoot: `0x${'53'.repeat(32)}`,
    sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347',
    size: '0xed9',
    stateRoot: `0x${'76'.repeat(32)}`,
    timestamp: '0x69384f78',
    transactions: [`0x${'d3'.repeat(32)}`],
    transactionsRoot: `0x${'ab'.repeat(32)}`,
    uncles: [],
  };
  const dir = mkdtempSync(join(tmpdir(), 'erc20-etl-nitro-'));
  let devnet: RunningDevnet;
  beforeAll(async () => {
    writeFileSync(join(dir, 'headers.jsonl'), `${JSON.stringify(nitro)}\n`);
    devnet = await startDevnet(await readServedDataset(dir), { chainId: 42161 });
  });
  afterAll(async () => {
    await devnet.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves each header exactly as given, every key kept, by hash, by number and as latest', async () => {
    const client = clientOf(devnet.base);
    expect(await client.request({ method: 'eth_getBlockByHash', params: [nitro.hash as `0x${string}`, false] })).toEqual(nitro);
    expect(await client.request({ method: 'eth_getBlockByNumber', params: ['latest', false] })).toEqual(nitro);
    expect(await client.request({ method: 'erigon_getHeaderByHash' as never, params: [nitro.hash] as never })).toEqual(nitro);
    expect((await client.getBlock({ blockNumber: BigInt(nitro.number) })).hash).toBe(nitro.hash);
    expect(await client.getChainId()).toBe(42161);
    expect(await client.getLogs({ fromBlock: 'earliest', toBlock: 'latest' })).toEqual([]);
  });
});
