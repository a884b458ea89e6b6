import { describe, expect, it, vi } from 'vitest';
import { createChainStore } from './chain-store.ts';
import { rpcLog } from './chain-log.ts';
import { syntheticForeignLogs } from './foreign-logs.ts';
import { createSendBuffers, jsonBytes, pageBytes } from './http-io.ts';
import { LogsAnswer } from './logs-answer.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from './synthetic.ts';

describe('send buffers', () => {
  it('writes a JSON value as the UTF-8 of its text, non-ASCII included, in memory used again once given back', () => {
    const buffers = createSendBuffers();
    const value = { jsonrpc: '2.0', id: 1, result: [{ name: 'Éther ✓ 🦄', n: 1 }, null, '0x1'] };
    const first = jsonBytes(value, buffers);
    expect(first.equals(Buffer.from(JSON.stringify(value), 'utf8'))).toBe(true);
    buffers.give(first);
    const second = jsonBytes({ id: 2 }, buffers);
    expect(second.toString('utf8')).toBe('{"id":2}');
    expect(second.buffer).toBe(first.buffer);
  });

  it('gives the smallest free buffer that fits, so a small body does not take a large one', () => {
    const buffers = createSendBuffers();
    const large = buffers.take(6_000_000);
    const small = buffers.take(100_000);
    buffers.give(large);
    buffers.give(small);
    expect(buffers.take(90_000).buffer).toBe(small.buffer);
    expect(buffers.take(5_000_000).buffer).toBe(large.buffer);
    // none free fits: new memory
    const fresh = buffers.take(10);
    expect(fresh.buffer).not.toBe(small.buffer);
    expect(fresh.buffer).not.toBe(large.buffer);
  });

  it('writes large arrays (an answer of many logs, a batch) a group at a time, with the bytes JSON.stringify gives', () => {
    const buffers = createSendBuffers();
    const log = (i: number) => ({ address: '0xa0b8', blockNumber: `0x${i.toString(16)}`, topics: ['0xddf2', null], data: i % 7 ? '0x01' : 'Éther ✓ 🦄' });
    const logs = Array.from({ length: 1_000 }, (_, i) => log(i));
    // a synthetic chain's logs as the server answers them, foreign shapes among them
    const chainOptions = { ...SYNTHETIC_DEFAULTS, blocks: 40, tokens: 2, transfers: 400 };
    const chain = createChainStore(generateSyntheticDataset(chainOptions), syntheticForeignLogs(chainOptions));
    const rpcLogs = chain.logs(SYNTHETIC_DEFAULTS.startBlock, SYNTHETIC_DEFAULTS.startBlock + 39).map(rpcLog);
    const answer = new LogsAnswer(chain.storedLogs(SYNTHETIC_DEFAULTS.startBlock, SYNTHETIC_DEFAULTS.startBlock + 39));
    expect(answer.jsonBound()).toBeGreaterThan(64 * 1024);
    const values: unknown[] = [
      { jsonrpc: '2.0', id: 7, result: logs },
      { result: logs, id: 'a "quoted" id', jsonrpc: '2.0' },
      Array.from({ length: 150 }, (_, i) => ({ jsonrpc: '2.0', id: i, result: i === 3 ? logs : log(i) })),
      Array.from({ length: 65 }, (_, i) => i),
      { jsonrpc: '2.0', id: 1, result: Array.from({ length: 65 }, () => 'x'.repeat(100_000)) },
      { jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'query returned more than 10000 results' }, result: undefined },
      [],
      // short elements first, then long ones of many-byte characters: the memory the first group sized grows
      { jsonrpc: '2.0', id: 2, result: Array.from({ length: 500 }, (_, i) => (i < 64 ? i : `🦄 Éther ✓ ${'€'.repeat(3_000)} ${i}`)) },
      // a batch larger than a group with an answer left out, and values of other kinds: as JSON.stringify writes them
      Array.from({ length: 70 }, (_, i) => (i === 5 ? undefined : { id: i, result: i })),
      {
        id: 3,
        result: Object.assign(
          Array.from({ length: 100 }, (_, i) => i),
          { toJSON: () => 'own' },
        ),
      },
      Object.assign(Object.create({ result: logs }) as object, { id: 4 }),
      // an answer with a toJSON of its own, and elements whose toJSON is handed their index (a batch's: theirs)
      { id: 5, result: Array.from({ length: 100 }, (_, i) => i), toJSON: () => ({ replaced: true }) },
      { id: 6, result: Array.from({ length: 100 }, () => ({ toJSON: (key: string) => key })) },
      Array.from({ length: 100 }, (_, i) => ({ id: i, result: i, toJSON: (key: string) => key })),
      // the logs as RpcLogs, and as the server answers them (LogsAnswer writes its own bytes): alone, in batches small
      // and large (each answer larger than the memory a batch starts with), beside answers of other kinds
      { jsonrpc: '2.0', id: 8, result: rpcLogs },
      { jsonrpc: '2.0', id: 8, result: answer },
      { jsonrpc: '2.0', id: 8, result: new LogsAnswer([]) },
      Array.from({ length: 3 }, (_, i) => ({ jsonrpc: '2.0', id: i, result: answer })),
      Array.from({ length: 70 }, (_, i) => ({ jsonrpc: '2.0', id: i, result: i % 2 ? answer : log(i) })),
      [
        { jsonrpc: '2.0', id: 'é', result: answer },
        { jsonrpc: '2.0', id: 2, error: { code: -32005, message: 'Éther ✓' } },
      ],
      // a batch one of whose members has a toJSON (handed its index): as JSON.stringify writes it
      [
        { jsonrpc: '2.0', id: 1, result: answer },
        { id: 2, toJSON: (key: string) => key },
      ],
      { jsonrpc: '2.0', id: 9, result: [...rpcLogs.slice(0, 100), log(1), ...rpcLogs.slice(100)] },
    ];
    for (const value of values) {
      const bytes = jsonBytes(value, buffers);
      expect(bytes.equals(Buffer.from(JSON.stringify(value), 'utf8'))).toBe(true);
      buffers.give(bytes);
    }
  });

  it('writes an eth_getLogs answer’s logs with their own writer, alone and in batches, never making their objects', () => {
    const options = { ...SYNTHETIC_DEFAULTS, blocks: 10, tokens: 2, transfers: 100 };
    const answer = new LogsAnswer(createChainStore(generateSyntheticDataset(options)).storedLogs(options.startBlock, options.startBlock + 9));
    const made = vi.spyOn(LogsAnswer.prototype, 'toJSON');
    const written = vi.spyOn(LogsAnswer.prototype, 'writeJson');
    try {
      const buffers = createSendBuffers();
      for (const value of [
        { jsonrpc: '2.0', id: 1, result: answer },
        [{ jsonrpc: '2.0', id: 1, result: answer }],
        Array.from({ length: 65 }, (_, id) => ({ jsonrpc: '2.0', id, result: answer })),
      ]) {
        buffers.give(jsonBytes(value, buffers));
      }
      expect(made).not.toHaveBeenCalled();
      expect(written).toHaveBeenCalledTimes(67);
    } finally {
      made.mockRestore();
      written.mockRestore();
    }
  });
});

describe('pageBytes', () => {
  it('writes the head as UTF-8 and the rows as JSON.stringify would, into memory an earlier answer filled', () => {
    const { transfers } = generateSyntheticDataset({ seed: 6, blocks: 40, tokens: 2, transfers: 1200, startBlock: 18_000_000 });
    const buffers = createSendBuffers();
    const dirty = buffers.take(2 * 1024 * 1024).fill(0x2a);
    buffers.give(dirty);
    const head = '{"contractName":"Éther Synthétique ✓ 🦄","count":7,"tokenTransfers":';
    for (const n of [0, 1, 5, 999, 1000]) {
      const rows = transfers.slice(0, n);
      const bytes = pageBytes({ head, rows }, buffers);
      expect(bytes.equals(Buffer.from(`${head}${JSON.stringify(rows.map(({ contractAddress: _c, ...rest }) => rest))}}`, 'utf8'))).toBe(true);
      buffers.give(bytes);
    }
  });
});
