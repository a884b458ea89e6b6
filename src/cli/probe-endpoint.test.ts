import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURE_DIR } from '../../test/helpers/fixtures.ts';
import { PROBE_LIMITS, probeEndpoint, probeText, type BatchReply, type CallReply, type ProbeDeps, type ProbeFindings } from './probe-endpoint.ts';

/**
 * A fake endpoint: a chain of `head + 1` blocks holding `perBlock` Transfer logs each, an `eth_getLogs` that refuses
 * spans over `maxRange` blocks or answers over `maxResults` logs the way `style` says, and a batch limit.
 */
interface FakeNode {
  head?: number;
  chainId?: string;
  perBlock?: number;
  maxRange?: number;
  maxResults?: number;
  style?: 'infura' | 'ankr' | 'quicknode' | 'reth-useless' | 'custom';
  /** Spans over this many blocks never answer. */
  hangAbove?: number;
  erigon?: boolean;
  getLogs?: boolean;
  getBlockByHash?: boolean;
  batchLimit?: number;
  /** Batches over this many calls never answer. */
  batchHangAbove?: number;
  /** The head block `eth_getBlockByNumber` answers (a real mainnet header unless given). */
  headBlock?: Record<string, unknown>;
}

/** A real mainnet header: the head block the fake node answers with. */
const HEAD_BLOCK = JSON.parse(readFileSync(join(FIXTURE_DIR, 'headers.jsonl'), 'utf8').split('\n')[0]!) as Record<string, unknown> & { hash: string; number: string };
const HEAD_HASH = HEAD_BLOCK.hash;
const hex = (n: number) => `0x${n.toString(16)}`;

function fake(node: FakeNode): ProbeDeps & { asked: { method: string; params: unknown[] }[] } {
  const head = node.head ?? 1_000_000;
  const perBlock = node.perBlock ?? 1;
  const asked: { method: string; params: unknown[] }[] = [];
  const notFound = (method: string): CallReply => ({ error: { code: -32601, message: `the method ${method} does not exist/is not available` } });
  return {
    source: 'node',
    asked,
    async call(method, params): Promise<CallReply> {
      asked.push({ method, params });
      switch (method) {
        case 'eth_chainId':
          return { result: node.chainId ?? '0x1' };
        case 'eth_blockNumber':
          return { result: hex(head) };
        case 'eth_getBlockByNumber':
          return { result: node.headBlock ?? HEAD_BLOCK };
        case 'erigon_getHeaderByHash':
          return node.erigon === false ? notFound(method) : { result: { hash: params[0] } };
        case 'eth_getBlockByHash':
          return node.getBlockByHash === false ? notFound(method) : { result: { hash: params[0] } };
        case 'eth_getLogs': {
          if (node.getLogs === false) return notFound(method);
          const filter = params[0] as { fromBlock: string; toBlock: string; topics: string[] };
          const from = Number(filter.fromBlock);
          const to = Number(filter.toBlock);
          const blocks = to - from + 1;
          const logs = blocks * perBlock;
          if (node.hangAbove !== undefined && blocks > node.hangAbove) return { timedOut: 'no answer within 30 s' };
          if (node.maxRange !== undefined && blocks > node.maxRange) return refuse(node, 'range', from, to, blocks);
          if (node.maxResults !== undefined && logs > node.maxResults) return refuse(node, 'results', from, to, blocks);
          return { result: Array.from({ length: logs }, () => ({})) };
        }
        default:
          return notFound(method);
      }
    },
    async batch(size): Promise<BatchReply> {
      if (node.batchHangAbove !== undefined && size > node.batchHangAbove) return { timedOut: 'no answer within 30 s' };
      if (node.batchLimit !== undefined && size > node.batchLimit) return { refused: `HTTP 400 -32600 "batch too large (at most ${node.batchLimit})"` };
      return { answers: Array.from({ length: size }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, result: hex(head) })) };
    },
  };

  function refuse(n: FakeNode, why: 'range' | 'results', from: number, to: number, blocks: number): CallReply {
    const cap = n.maxResults ?? 0;
    switch (n.style ?? 'ankr') {
      case 'infura': {
        if (why === 'range') return { error: { code: -32602, message: `range ${blocks} exceeds limit of ${n.maxRange}` } };
        const fit = Math.max(1, Math.floor(cap / perBlock));
        return { error: { code: -32005, message: `query returned more than ${cap} results. Try with this block range [${hex(from)}, ${hex(from + fit - 1)}].` } };
      }
      case 'quicknode':
        return { error: { code: -32614, message: `eth_getLogs is limited to a ${n.maxRange?.toLocaleString('en-US')} range` } };
      case 'reth-useless':
        return { error: { code: -32602, message: `query exceeds max results ${cap}, retry with the range ${from}-${to}` } };
      case 'custom':
        return { error: { code: -32000, message: 'request too heavy, try fewer blocks' } };
      default:
        return { error: { code: -32600, message: 'block range is too wide' } };
    }
  }
}

/** Probes `node`, noting the size of each batch it POSTs. */
async function probeBatches(node: ProbeDeps): Promise<{ f: ProbeFindings; sizes: number[] }> {
  const sizes: number[] = [];
  const f = await probeEndpoint({
    ...node,
    batch: (size) => {
      sizes.push(size);
      return node.batch(size);
    },
  });
  return { f, sizes };
}

describe('probeEndpoint, a node source', () => {
  it('takes the first span when the node states no limit, and finds everything a node source needs', async () => {
    const f = await probeEndpoint(fake({ head: 5_000, perBlock: 2 }));
    expect(f).toMatchObject({ source: 'node', chainId: 1, head: 5_000, chainIdError: null, headError: null, missing: [] });
    expect(f.erigonGetHeaderByHash).toEqual({ supported: 'yes', detail: null });
    expect(f.ethGetBlockByHash).toEqual({ supported: 'yes', detail: null });
    // 100,000 blocks back, or from block 0 when the chain is shorter
    expect(f.logs).toMatchObject({ method: 'yes', accepted: { fromBlock: 0, toBlock: 5_000, blocks: 5_001, logs: 10_002 }, largestAnswer: 10_002, smallestRefused: null });
    expect(f.logs?.calls).toHaveLength(1);
    expect(f.batch).toEqual({ largestAccepted: 100, refused: null, triedUpTo: 100 });
    expect(f.pageApi).toBeNull();
  });

  it("asks the header methods about the head's own block", async () => {
    const node = fake({});
    await probeEndpoint(node);
    expect(node.asked.find((a) => a.method === 'eth_getBlockByNumber')?.params).toEqual([hex(1_000_000), false]);
    expect(node.asked.find((a) => a.method === 'erigon_getHeaderByHash')?.params).toEqual([HEAD_HASH]);
    expect(node.asked.find((a) => a.method === 'eth_getBlockByHash')?.params).toEqual([HEAD_HASH, false]);
  });

  it("follows a stated block limit (QuickNode's) and stops there", async () => {
    const f = await probeEndpoint(fake({ maxRange: 10_000, style: 'quicknode' }));
    expect(f.logs?.calls.map((c) => [c.toBlock - c.fromBlock + 1, c.outcome])).toEqual([
      [100_000, 'refused'],
      [10_000, 'answered'],
    ]);
    expect(f.logs).toMatchObject({ accepted: { blocks: 10_000, logs: 10_000, toBlock: 1_000_000 }, statedMaxRange: 10_000, smallestRefused: 100_000 });
  });

  it("follows Infura's suggested range, and stops when its answer fills the stated results cap", async () => {
    const f = await probeEndpoint(fake({ maxResults: 10_000, perBlock: 4, style: 'infura' }));
    expect(f.logs?.calls.map((c) => [c.fromBlock, c.toBlock, c.outcome])).toEqual([
      [900_001, 1_000_000, 'refused'],
      [900_001, 902_500, 'answered'],
    ]);
    expect(f.logs).toMatchObject({ accepted: { blocks: 2_500, logs: 10_000 }, largestAnswer: 10_000, statedMaxResults: 10_000 });
  });

  it('halves without a hint, then narrows between what answered and what was refused, within 16 calls', async () => {
    const f = await probeEndpoint(fake({ maxRange: 3_000, style: 'ankr' }));
    const spans = f.logs!.calls.map((c) => [c.toBlock - c.fromBlock + 1, c.outcome]);
    expect(spans.slice(0, 7)).toEqual([
      [100_000, 'refused'],
      [50_000, 'refused'],
      [25_000, 'refused'],
      [12_500, 'refused'],
      [6_250, 'refused'],
      [3_125, 'refused'],
      [1_562, 'answered'],
    ]);
    // halfway between what answered and what was refused, while that gains more than a twentieth
    expect(spans.slice(7)).toEqual([
      [2_343, 'answered'],
      [2_734, 'answered'],
      [2_929, 'answered'],
    ]);
    expect(f.logs?.accepted?.blocks).toBe(2_929);
    expect(f.logs?.smallestRefused).toBe(3_125);
    expect(f.missing).toEqual([]);
  });

  it("takes a suggested range equal to the one asked (reth's) as no hint", async () => {
    const f = await probeEndpoint(fake({ maxResults: 40_000, style: 'reth-useless' }));
    expect(f.logs?.calls.slice(0, 3).map((c) => c.toBlock - c.fromBlock + 1)).toEqual([100_000, 50_000, 25_000]);
    // 25,000 answered; halfway to 50,000 answered too, holding over 90 % of the stated cap: no wider span can do
    expect(f.logs?.calls.slice(3).map((c) => [c.toBlock - c.fromBlock + 1, c.outcome])).toEqual([[37_500, 'answered']]);
    expect(f.logs).toMatchObject({ accepted: { blocks: 37_500 }, statedMaxResults: 40_000 });
  });

  it('asks again smaller after a timeout or an error in words of its own, and says what happened', async () => {
    const hanging = await probeEndpoint(fake({ hangAbove: 20_000 }));
    expect(hanging.logs?.calls.slice(0, 4).map((c) => c.outcome)).toEqual(['timeout', 'timeout', 'timeout', 'answered']);
    expect(hanging.logs?.calls[0]).toMatchObject({ outcome: 'timeout', message: 'no answer within 30 s' });
    expect(hanging.logs?.method).toBe('yes');
    expect(hanging.logs?.accepted?.blocks).toBeGreaterThanOrEqual(18_750);
    expect(hanging.logs?.accepted?.blocks).toBeLessThanOrEqual(20_000);
    expect(hanging.logs?.smallestRefused).toBeGreaterThan(20_000);
    // each timeout is a whole deadline: after the fourth the probe keeps what answered
    expect(hanging.logs?.calls.filter((c) => c.outcome === 'timeout')).toHaveLength(PROBE_LIMITS.logsTimeouts);
    expect(hanging.logs?.calls.at(-1)?.outcome).toBe('timeout');
    expect(hanging.logs?.stoppedAfterTimeouts).toBe(PROBE_LIMITS.logsTimeouts);
    expect(probeText(hanging, 'x')).toContain(`stopped after ${PROBE_LIMITS.logsTimeouts} calls unanswered in time`);

    const custom = await probeEndpoint(fake({ maxRange: 60_000, style: 'custom' }));
    expect(custom.logs?.calls.slice(0, 2).map((c) => c.outcome)).toEqual(['error', 'answered']);
    expect(custom.logs?.method).toBe('yes');
  });

  it('fails naming eth_getLogs when the node has no such method, or refuses every call with an error that is not about size', async () => {
    const none = await probeEndpoint(fake({ getLogs: false }));
    expect(none.logs).toMatchObject({ method: 'no', accepted: null });
    expect(none.missing).toEqual(['eth_getLogs (-32601 "the method eth_getLogs does not exist/is not available")']);

    const refusing = await probeEndpoint(fake({ maxRange: 0, style: 'custom' }));
    expect(refusing.logs?.method).toBe('failed');
    expect(refusing.missing).toEqual(['eth_getLogs (-32000 "request too heavy, try fewer blocks")']);
  });

  it('fails naming eth_getLogs when no call is answered in time, or every one is refused for size, however small', async () => {
    const hanging = await probeEndpoint(fake({ hangAbove: 0 }));
    expect(hanging.logs?.method).toBe('failed');
    expect(hanging.logs?.calls.length).toBeGreaterThan(1);
    expect(hanging.logs?.calls.every((c) => c.outcome === 'timeout')).toBe(true);
    // four spans halving, then a single block: five deadlines, not sixteen
    expect(hanging.logs?.calls.map((c) => c.toBlock - c.fromBlock + 1)).toEqual([100_000, 50_000, 25_000, 12_500, 1]);
    expect(hanging.logs?.calls.at(-1)).toMatchObject({ fromBlock: 1_000_000, toBlock: 1_000_000 });
    expect(hanging.missing).toEqual([`eth_getLogs (none of ${hanging.logs?.calls.length} calls was answered, down to a single block; the last: no answer within 30 s)`]);
    expect(probeText(hanging, 'x')).toContain('missing:');
    expect(hanging.logs?.stoppedAfterTimeouts).toBe(5);
    expect(probeText(hanging, 'x')).toContain('the node may only be slow: run probe again with a larger --rpc-timeout');

    const tooSmall = await probeEndpoint(fake({ maxRange: 0, style: 'infura' }));
    expect(tooSmall.logs?.method).toBe('failed');
    expect(tooSmall.missing[0]).toMatch(/^eth_getLogs \(none of \d+ calls was answered, down to a single block; the last: -32602 "range 1 exceeds limit of 0"\)$/);
  });

  it('comes down to a small limit the node does not state (100 blocks), and narrows to it', async () => {
    const small = await probeEndpoint(fake({ maxRange: 100, style: 'ankr' }));
    expect(small.logs?.calls.length).toBeLessThanOrEqual(PROBE_LIMITS.logsCalls);
    expect(small.logs?.accepted?.blocks).toBeGreaterThan(95);
    expect(small.logs?.accepted?.blocks).toBeLessThanOrEqual(100);
    expect(small.logs?.smallestRefused).toBeLessThanOrEqual(110);
    expect(small.missing).toEqual([]);
  });

  it('asks a single block with its last call when a limit the node does not state refused every wider span', async () => {
    const tiny = await probeEndpoint(fake({ maxRange: 2, style: 'ankr' }));
    expect(tiny.logs?.calls.length).toBe(PROBE_LIMITS.logsCalls);
    expect(tiny.logs).toMatchObject({ method: 'yes', accepted: { fromBlock: 1_000_000, toBlock: 1_000_000, blocks: 1 } });
    expect(tiny.missing).toEqual([]);
  });

  it('needs one of the header methods: eth_getBlockByHash where there is no Erigon', async () => {
    const geth = await probeEndpoint(fake({ erigon: false }));
    expect(geth.erigonGetHeaderByHash.supported).toBe('no');
    expect(geth.missing).toEqual([]);
    const neither = await probeEndpoint(fake({ erigon: false, getBlockByHash: false }));
    expect(neither.missing).toEqual([
      'block headers: neither eth_getBlockByHash (-32601 "the method eth_getBlockByHash does not exist/is not available") nor erigon_getHeaderByHash (-32601 "the method erigon_getHeaderByHash does not exist/is not available")',
    ]);
  });

  it("uses the node source's own chain id and Erigon test where it has them", async () => {
    const node = fake({});
    const f = await probeEndpoint({ ...node, chainId: async () => 2n ** 60n, supportsErigon: async () => false });
    expect(f.chainId).toBe('1152921504606846976');
    expect(f.erigonGetHeaderByHash.supported).toBe('no');
    expect(node.asked.map((a) => a.method)).not.toContain('eth_chainId');
    expect(node.asked.map((a) => a.method)).not.toContain('erigon_getHeaderByHash');
  });

  it('halves the batch while refused, narrows between answered and refused, and reports the largest answered whole', async () => {
    const { f, sizes } = await probeBatches(fake({ batchLimit: 20 }));
    expect(sizes).toEqual([100, 50, 25, 12, 18, 21, 19, 20]);
    expect(f.batch).toEqual({ largestAccepted: 20, refused: { size: 21, message: 'HTTP 400 -32600 "batch too large (at most 20)"' }, triedUpTo: 100 });

    const single = await probeEndpoint(fake({ batchLimit: 0 }));
    expect(single.batch?.largestAccepted).toBeNull();
    expect(probeText(single, 'x')).toMatch(/batch limit: {2}no batch answered \(HTTP 400 -32600 "batch too large \(at most 0\)"\): one call per POST/);
  });

  it('stops sizing batches after two POSTs unanswered in time, keeping what answered', async () => {
    const { f, sizes } = await probeBatches(fake({ batchHangAbove: 10 }));
    expect(sizes).toEqual([100, 50]);
    expect(f.batch).toMatchObject({ largestAccepted: null, refused: { size: 50, message: 'no answer within 30 s' }, stoppedAfterTimeouts: 2 });
    expect(probeText(f, 'x')).toContain('no batch answered in time, down to 50 calls: one call per POST; stopped after 2 POSTs unanswered in time (the node may only be slow');
  });

  it('notes an unreachable endpoint once per question and names what is missing', async () => {
    const down: ProbeDeps = {
      source: 'node',
      call: async () => {
        throw new Error('POST http://127.0.0.1:9/<redacted>: connection refused');
      },
      batch: async () => {
        throw new Error('unreachable');
      },
    };
    const f = await probeEndpoint(down);
    expect(f).toMatchObject({ head: null, chainId: null, logs: null, batch: null, chainIdError: 'POST http://127.0.0.1:9/<redacted>: connection refused' });
    expect(f.missing).toEqual(['an answer to eth_blockNumber (POST http://127.0.0.1:9/<redacted>: connection refused)']);
  });

  it('goes on when the head is answered with an error, naming it', async () => {
    const node = fake({});
    const f = await probeEndpoint({
      ...node,
      call: async (method, params) => (method === 'eth_blockNumber' ? { error: { code: -32000, message: 'syncing' } } : node.call(method, params)),
    });
    expect(f).toMatchObject({ head: null, headError: '-32000 "syncing"', logs: { method: 'not asked', error: 'the head is unknown (eth_blockNumber)' }, batch: null });
    expect(f.erigonGetHeaderByHash.supported).toBe('yes');
    expect(f.missing).toEqual(['eth_blockNumber (-32000 "syncing")']);
  });
});

describe('probeEndpoint, a builder source', () => {
  it('asks for the head, erigon_getHeaderByHash and a page; not eth_getLogs', async () => {
    const node = fake({});
    const pages: (number | undefined)[] = [];
    const f = await probeEndpoint({ ...node, source: 'builder', page: async (head) => void pages.push(head) });
    expect(pages).toEqual([1_000_000]);
    expect(f).toMatchObject({ source: 'builder', head: 1_000_000, logs: null, ethGetBlockByHash: null, pageApi: { reachable: true, detail: null }, missing: [] });
    expect(node.asked.map((a) => a.method)).not.toContain('eth_getLogs');
  });

  it('needs erigon_getHeaderByHash and the page API', async () => {
    const f = await probeEndpoint({
      ...fake({ erigon: false }),
      source: 'builder',
      page: async () => {
        throw new Error('GET …/builder/getTokenTransfers: HTTP 404: no such endpoint');
      },
    });
    expect(f.missing).toEqual([
      'erigon_getHeaderByHash, which a builder source reads headers with (-32601 "the method erigon_getHeaderByHash does not exist/is not available")',
      'the page API, getTokenTransfers (GET …/builder/getTokenTransfers: HTTP 404: no such endpoint)',
    ]);
  });
});

describe('probeText', () => {
  it('prints chain id, head, the header methods, the eth_getLogs findings and the batch limit', async () => {
    const text = probeText(await probeEndpoint(fake({ maxRange: 10_000, style: 'quicknode', erigon: false, batchLimit: 50 })), 'https://node.example/<redacted>');
    expect(text).toBe(
      [
        'erc20-etl probe: node source at https://node.example/<redacted>',
        '  chain id:     1',
        '  head:         1000000',
        '  erigon_getHeaderByHash: no',
        '  eth_getBlockByHash:     yes',
        '  eth_getLogs:  largest range accepted 10000 blocks (990001–1000000: 10000 logs); largest answer 10000 logs',
        '                smallest range refused 100000 blocks',
        '                stated by the node: at most 10000 blocks per call',
        '                900001–1000000 (100000 blocks): refused: -32614 "eth_getLogs is limited to a 10,000 range"',
        '                990001–1000000 (10000 blocks): 10000 logs',
        '  batch limit:  50 calls per POST (51 refused: HTTP 400 -32600 "batch too large (at most 50)")',
        `  headers:      verified by the ethereum rule (block ${Number(HEAD_BLOCK.number)})`,
        '  everything a node source needs is there',
        '',
      ].join('\n'),
    );
  });

  it('names what is missing', async () => {
    const text = probeText(await probeEndpoint(fake({ getLogs: false })), 'http://127.0.0.1:8545');
    expect(text).toMatch(/\n {2}eth_getLogs: {2}no \(-32601 "the method eth_getLogs does not exist\/is not available"\)\n/);
    expect(text).toMatch(/\n {2}missing: {6}eth_getLogs \(-32601 .*\)\n$/);
  });

  it("reads the head block's header and says how this chain's headers are treated", async () => {
    const block = Number(HEAD_BLOCK.number);
    expect((await probeEndpoint(fake({}))).headers).toEqual({ block, rule: 'ethereum', verified: true });
    // a chain whose rule the exporter does not know (zkSync Era): stored unverified, which a run can do
    const zksync = await probeEndpoint(fake({ chainId: '0x144' }));
    expect(zksync.headers).toEqual({ block, rule: 'unknown', verified: false, reason: expect.stringMatching(/zkSync Era/) });
    expect(zksync.missing).toEqual([]);
    expect(probeText(zksync, 'http://127.0.0.1:8545')).toMatch(/\n {2}headers: {6}stored unverified: zkSync Era/);
  });

  it('fails when the head header does not hash by its chain rule, naming the block', async () => {
    const block = Number(HEAD_BLOCK.number);
    const findings = await probeEndpoint(fake({ headBlock: { ...HEAD_BLOCK, gasUsed: '0x1' } }));
    expect(findings.headers).toMatchObject({ block, rule: 'ethereum', verified: false, reason: expect.stringContaining(`block ${block}`) });
    expect(findings.missing).toEqual([expect.stringMatching(new RegExp(`^verified headers: block ${block} does not hash to`))]);
  });
});
