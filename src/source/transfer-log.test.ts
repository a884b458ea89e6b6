import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { FIXTURE_DIR } from '../../test/helpers/fixtures.ts';
import { TRANSFER_KEYS, type TransferRecord } from '../dataset/types.ts';
import { TRANSFER_TOPIC } from '../eth/logs-bloom.ts';
import { BadResponseError } from './errors.ts';
import { a, h } from './test-rows.ts';
import {
  blockTimestampOf,
  type LogReading,
  type LogsQuery,
  logTimestampProblem,
  readLogElement,
  readLogsAnswer,
  readTransferLog,
  type TransferLog,
  withBlockTimestamp,
} from './transfer-log.ts';

const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const topicOf = (address: string) => `0x${'0'.repeat(24)}${address.slice(2)}`;
const word = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;

/** A log as a node answers `eth_getLogs`: block 17000000, log 5, a transfer of 1 USDC from a('1') to a('2'). */
function rawLog(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    address: USDC,
    topics: [TRANSFER_TOPIC, topicOf(a('1')), topicOf(a('2'))],
    data: word(1_000_000n),
    blockNumber: '0x1036640',
    blockHash: h('b'),
    transactionHash: h('c'),
    transactionIndex: '0x3',
    logIndex: '0x5',
    removed: false,
    ...overrides,
  };
}

function read(raw: unknown): { reading: LogReading | undefined; problems: string[] } {
  const problems: string[] = [];
  return { reading: readTransferLog(raw, problems), problems };
}

function problemsOf(raw: unknown): string[] {
  const { reading, problems } = read(raw);
  expect(reading).toBeUndefined();
  return problems;
}

/** The problems of a refused answer, the same whether its logs are read here or were read one by one as it was parsed. */
function answerProblems(result: unknown, query = { contracts: [USDC], fromBlock: 17_000_000, toBlock: 17_000_099 }): string[] {
  const problems = (read?: () => void) => {
    try {
      read ? read() : readLogsAnswer(result, query);
    } catch (err) {
      expect(err).toBeInstanceOf(BadResponseError);
      return [...(err as BadResponseError).problems];
    }
    throw new Error('the answer was accepted');
  };
  const here = problems();
  if (Array.isArray(result)) expect(problems(() => readAsParsed(result, query))).toEqual(here);
  return here;
}

/** `readLogsAnswer` of the answer as the node source reads it: each log read as the HTTP client parsed it, the raw ones gone. */
function readAsParsed(result: unknown[], query: LogsQuery) {
  return readLogsAnswer(
    result.map(() => undefined),
    query,
    result.map((raw, i) => readLogElement(raw, i)),
  );
}

const lines = (file: string) =>
  readFileSync(join(FIXTURE_DIR, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('readTransferLog', () => {
  it('knows the Transfer topic as keccak256 of the event signature', () => {
    expect(`0x${bytesToHex(keccak_256(utf8ToBytes('Transfer(address,address,uint256)')))}`).toBe(TRANSFER_TOPIC);
    expect(TRANSFER_TOPIC).toBe('0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');
  });

  it('reads a 3-topic log with 32 bytes of data as an ERC-20 transfer, its block time left empty', () => {
    const { reading, problems } = read(rawLog());
    expect(problems).toEqual([]);
    expect(reading).toEqual({
      kind: 'transfer',
      transfer: {
        contractAddress: USDC,
        fromAddress: a('1'),
        toAddress: a('2'),
        value: '1000000',
        blockHash: h('b'),
        blockNumber: 17_000_000,
        blockTimestamp: '',
        transactionHash: h('c'),
        transactionIndex: 3,
        logIndex: 5,
      },
      logTimestamp: undefined,
    });
  });

  it('reads a real mainnet log, as a node recorded it, into the builder source’s row', () => {
    // blockchain-etl/ethereum-etl, tests/resources/test_export_receipts_job/receipts_with_logs/
    // web3_response.eth_getTransactionReceipt_0x04cbcb23….json: a Parity log (extra keys, no `removed`), verbatim
    const log = {
      address: '0xf4eced2f682ce333f96f2d8966c613ded8fc95dd',
      blockHash: '0x246edb4b351d93c27926f4649bcf6c24366e2a7c7c718dc9158eea20c03bc6ae',
      blockNumber: '0x76250',
      data: '0x00000000000000000000000000000000000000000000000000000000000186a0',
      logIndex: '0x0',
      topics: [
        '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef',
        '0x0000000000000000000000001b63142628311395ceafeea5667e7c9026c862ca',
        '0x000000000000000000000000ac4df82fe37ea2187bc8c011a23d743b4f39019a',
      ],
      transactionHash: '0x04cbcb236043d8fb7839e07bbc7f5eed692fb2ca55d897f1101eac3e3ad4fab8',
      transactionIndex: '0x0',
      transactionLogIndex: '0x0',
      type: 'mined',
    };
    const header = lines('headers.jsonl').find((x) => x.hash === log.blockHash)!;
    const reading = read(log).reading as TransferLog;
    const row = withBlockTimestamp(reading.transfer, blockTimestampOf(header.timestamp as string));
    expect(row).toEqual(lines('transfers.jsonl')[0]);
    // the dataset's field order, as the builder's rows have it
    expect(Object.keys(row)).toEqual([...TRANSFER_KEYS]);
  });

  it('gives, for every transfer of the mainnet fixture served as logs, the row the builder source stores', () => {
    const rows = lines('transfers.jsonl') as unknown as TransferRecord[];
    const times = new Map(lines('headers.jsonl').map((x) => [x.hash as string, blockTimestampOf(x.timestamp as string)]));
    const hex = (n: number) => `0x${n.toString(16)}`;
    const logs = [...rows]
      .sort((x, y) => x.blockNumber - y.blockNumber || x.logIndex - y.logIndex)
      .map((r) => ({
        address: r.contractAddress,
        topics: [TRANSFER_TOPIC, topicOf(r.fromAddress), topicOf(r.toAddress)],
        data: word(BigInt(r.value)),
        blockNumber: hex(r.blockNumber),
        blockHash: r.blockHash,
        transactionHash: r.transactionHash,
        transactionIndex: hex(r.transactionIndex),
        logIndex: hex(r.logIndex),
        removed: false,
      }));
    const contracts = [...new Set(rows.map((r) => r.contractAddress))];
    const answer = readLogsAnswer(logs, { contracts, fromBlock: 0, toBlock: 20_000_000 });
    const built = answer.transfers.map((t) => withBlockTimestamp(t.transfer, times.get(t.transfer.blockHash)!));
    expect(built).toHaveLength(910);
    expect(built).toEqual(rows.sort((x, y) => x.blockNumber - y.blockNumber || x.logIndex - y.logIndex));
  });

  it('lower-cases addresses and hashes, and reads a value up to 2^256-1 as decimal text', () => {
    const max = `0x${'f'.repeat(64)}`;
    const { reading } = read(
      rawLog({
        address: USDC.toUpperCase().replace('0X', '0x'),
        topics: [TRANSFER_TOPIC.toUpperCase().replace('0X', '0x'), topicOf(`0x${'AB'.repeat(20)}`), topicOf(a('2'))],
        data: max,
        blockHash: h('B'),
      }),
    );
    const { transfer } = reading as TransferLog;
    expect(transfer.contractAddress).toBe(USDC);
    expect(transfer.fromAddress).toBe(`0x${'ab'.repeat(20)}`);
    expect(transfer.blockHash).toBe(h('b'));
    expect(transfer.value).toBe(((1n << 256n) - 1n).toString());
    expect((read(rawLog({ data: word(0n) })).reading as TransferLog).transfer.value).toBe('0');
  });

  it('classifies a 4-topic Transfer log as ERC-721', () => {
    const { reading, problems } = read(rawLog({ topics: [TRANSFER_TOPIC, topicOf(a('1')), topicOf(a('2')), word(42n)], data: '0x' }));
    expect(problems).toEqual([]);
    expect(reading).toEqual({ kind: 'skipped', skipped: 'erc721', contract: USDC, blockNumber: 17_000_000, blockHash: h('b'), transactionHash: h('c'), logIndex: 5 });
  });

  it('classifies other shapes of the Transfer log (from and to in the data, more data than the value) as other', () => {
    const inData = read(rawLog({ topics: [TRANSFER_TOPIC], data: `0x${topicOf(a('1')).slice(2)}${topicOf(a('2')).slice(2)}${word(5n).slice(2)}` }));
    expect(inData.reading).toMatchObject({ kind: 'skipped', skipped: 'other', contract: USDC });
    expect(read(rawLog({ topics: [TRANSFER_TOPIC, topicOf(a('1'))] })).reading).toMatchObject({ kind: 'skipped', skipped: 'other' });
    expect(read(rawLog({ data: '0x' })).reading).toMatchObject({ kind: 'skipped', skipped: 'other' });
    expect(read(rawLog({ data: `${word(1n)}${word(2n).slice(2)}` })).reading).toMatchObject({ kind: 'skipped', skipped: 'other' });
    expect(read(rawLog({ topics: [TRANSFER_TOPIC, word(1n), word(2n), word(3n), word(4n)] })).reading).toMatchObject({ kind: 'skipped', skipped: 'other' });
  });

  it('refuses data that is not whole 32-byte words: a damaged log, not a shape to skip (a stored row would be taken away)', () => {
    const short = read(rawLog({ data: `0x${'00'.repeat(31)}` }));
    expect(short.reading).toBeUndefined();
    expect(short.problems).toEqual([`contract ${USDC}, block 17000000, log 5, data: expected ABI-encoded data (whole 32-byte words), got "0x${'00'.repeat(31)}"`]);
    expect(read(rawLog({ data: `${word(1n)}00` })).problems).toHaveLength(1);
  });

  it('reads a removed log as a reorg signal, never a row', () => {
    const { reading } = read(rawLog({ removed: true }));
    expect(reading).toEqual({ kind: 'removed', contract: USDC, blockNumber: 17_000_000, blockHash: h('b'), transactionHash: h('c'), logIndex: 5 });
  });

  it('keeps the log’s own blockTimestamp, in seconds', () => {
    expect((read(rawLog({ blockTimestamp: '0x6431dbe3' })).reading as TransferLog).logTimestamp).toBe(0x6431dbe3);
    expect((read(rawLog({ blockTimestamp: null })).reading as TransferLog).logTimestamp).toBeUndefined();
  });

  it('refuses an address topic with bits in its first 12 bytes, naming contract, block, log and topic', () => {
    const dirty = `0x${'00'.repeat(11)}01${a('1').slice(2)}`;
    expect(problemsOf(rawLog({ topics: [TRANSFER_TOPIC, dirty, topicOf(a('2'))] }))).toEqual([
      `contract ${USDC}, block 17000000, log 5, topics[1]: expected an address topic (12 zero bytes, then 20 bytes), got "${dirty}"`,
    ]);
  });

  it('names every bad field of a log, and the log’s place in the answer when its block or index is unreadable', () => {
    expect(
      problemsOf(
        rawLog({
          address: 'USDC',
          blockNumber: '0x01036640',
          blockHash: '0xab',
          transactionHash: 7,
          transactionIndex: '3',
          logIndex: '0x20000000000000',
          removed: 'no',
          blockTimestamp: '1681000000',
          data: '0x123',
          topics: ['0x1234', topicOf(a('1')), topicOf(a('2'))],
        }),
      ),
    ).toEqual([
      'log, address: expected a 0x address of 40 hex digits, got "USDC"',
      'log, blockNumber: expected a hex quantity (0x, no leading zeros) up to 2^53-1, got "0x01036640"',
      'log, logIndex: expected a hex quantity (0x, no leading zeros) up to 2^53-1, got "0x20000000000000"',
      'log, blockHash: expected a 0x hash of 64 hex digits, got "0xab"',
      'log, transactionHash: expected a 0x hash of 64 hex digits, got 7',
      'log, transactionIndex: expected a hex quantity (0x, no leading zeros) up to 2^53-1, got "3"',
      'log, removed: expected true or false, got "no"',
      'log, blockTimestamp: expected a hex quantity (0x, no leading zeros) up to 2^53-1, got "1681000000"',
      'log, data: expected 0x hex bytes, got "0x123"',
      'log, topics[0]: expected a 0x topic of 64 hex digits, got "0x1234"',
    ]);
    const problems: string[] = [];
    readTransferLog(rawLog({ logIndex: null }), problems, 7);
    expect(problems).toEqual([`contract ${USDC}, block 17000000, result[7], logIndex: expected a hex quantity (0x, no leading zeros) up to 2^53-1, got null`]);
  });

  it('refuses a log of another event, logs without topics and non-objects', () => {
    const approval = '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925';
    expect(problemsOf(rawLog({ topics: [approval, topicOf(a('1')), topicOf(a('2'))] }))).toEqual([
      `contract ${USDC}, block 17000000, log 5, topics[0]: expected the Transfer topic ${TRANSFER_TOPIC}, the one asked for, got "${approval}"`,
    ]);
    expect(problemsOf(rawLog({ topics: [] }))).toEqual([`contract ${USDC}, block 17000000, log 5, topics: expected the Transfer topic ${TRANSFER_TOPIC} first, got []`]);
    expect(problemsOf(rawLog({ topics: undefined }))).toEqual([`contract ${USDC}, block 17000000, log 5, topics: expected an array of topics, got nothing`]);
    expect(problemsOf('0x')).toEqual(['log: expected a log object, got "0x"']);
    expect(problemsOf(rawLog({ blockNumber: null }))).toEqual([`contract ${USDC}, log 5, blockNumber: expected a hex quantity (0x, no leading zeros) up to 2^53-1, got null`]);
  });
});

describe('readLogsAnswer', () => {
  const at = (block: number, logIndex: number, extra: Record<string, unknown> = {}) =>
    rawLog({ blockNumber: `0x${block.toString(16)}`, logIndex: `0x${logIndex.toString(16)}`, blockHash: h(String(block % 10)), ...extra });

  it('sorts an answer into transfers, skipped logs and reorg signals', () => {
    const answer = readLogsAnswer(
      [
        at(17_000_000, 1),
        at(17_000_000, 2, { topics: [TRANSFER_TOPIC, topicOf(a('1')), topicOf(a('2')), word(7n)], data: '0x' }),
        at(17_000_001, 0, { removed: true }),
        at(17_000_002, 0),
      ],
      { contracts: [USDC.toUpperCase().replace('0X', '0x')], fromBlock: 17_000_000, toBlock: 17_000_099 },
    );
    expect(answer.transfers.map((t) => [t.transfer.blockNumber, t.transfer.logIndex])).toEqual([
      [17_000_000, 1],
      [17_000_002, 0],
    ]);
    expect(answer.skipped).toEqual([expect.objectContaining({ skipped: 'erc721', blockNumber: 17_000_000, logIndex: 2 })]);
    expect(answer.removed).toEqual([expect.objectContaining({ kind: 'removed', blockNumber: 17_000_001, logIndex: 0 })]);
    expect(readLogsAnswer([], { contracts: [USDC], fromBlock: 1, toBlock: 1 })).toEqual({ transfers: [], skipped: [], removed: [] });
  });

  it('reads an answer the same from its logs read one by one as the HTTP client parsed them', () => {
    const logs = [at(17_000_000, 1), at(17_000_000, 2, { topics: [TRANSFER_TOPIC, topicOf(a('1')), topicOf(a('2')), word(7n)], data: '0x' }), at(17_000_002, 0)];
    const query = { contracts: [USDC], fromBlock: 17_000_000, toBlock: 17_000_099 };
    const answer = readAsParsed(logs, query);
    expect(answer).toEqual(readLogsAnswer(logs, query));
    expect(answer.transfers).toHaveLength(2);
    expect(() => readLogsAnswer([undefined], query, [])).toThrow(/0 logs read for a result of 1/);
  });

  it('refuses logs out of chain order, twice, or of a contract or block not asked for', () => {
    const other = a('9');
    expect(answerProblems([at(17_000_002, 4), at(17_000_001, 0), at(17_000_001, 0), at(17_000_200, 0), at(17_000_201, 0, { address: other })])).toEqual([
      `contract ${USDC}, block 17000001, log 0, result[1]: expected chain order (blockNumber, then logIndex, ascending), got block 17000001 log 0 after block 17000002 log 4 at result[0]`,
      `contract ${USDC}, block 17000001, log 0, result[2]: the same log twice (block 17000001 log 0, as result[1]): expected each log once, in chain order`,
      `contract ${USDC}, block 17000200, log 0, result[3].blockNumber: expected a block from 17000000 to 17000099 (the queried range), got 17000200`,
      `contract ${other}, block 17000201, log 0, result[4].address: expected a contract asked for, got ${other}`,
      `contract ${other}, block 17000201, log 0, result[4].blockNumber: expected a block from 17000000 to 17000099 (the queried range), got 17000201`,
    ]);
  });

  it('refuses logs of one block that disagree on its hash or time', () => {
    expect(answerProblems([at(17_000_000, 0, { blockTimestamp: '0x10' }), at(17_000_000, 1), at(17_000_000, 2, { blockHash: h('e'), blockTimestamp: '0x11' })])).toEqual([
      `contract ${USDC}, block 17000000, log 2, result[2].blockHash: expected ${h('0')} as in result[1] of the same block, got ${h('e')}`,
      `contract ${USDC}, block 17000000, log 2, result[2].blockTimestamp: expected 0x10 as in an earlier log of the same block, got 0x11`,
    ]);
  });

  it('compares a log’s hash with the log before it, and its time with the first of its block that had one', () => {
    // a hash that changes once is one problem, not one per log after it
    expect(answerProblems([at(17_000_000, 0), at(17_000_000, 1, { blockHash: h('e') }), at(17_000_000, 2, { blockHash: h('e') })])).toEqual([
      `contract ${USDC}, block 17000000, log 1, result[1].blockHash: expected ${h('0')} as in result[0] of the same block, got ${h('e')}`,
    ]);
    // the first log has no time of its own: the second's is the block's, the third disagrees with it
    expect(answerProblems([at(17_000_000, 0), at(17_000_000, 1, { blockTimestamp: '0x10' }), at(17_000_000, 2, { blockTimestamp: '0x12' })])).toEqual([
      `contract ${USDC}, block 17000000, log 2, result[2].blockTimestamp: expected 0x10 as in an earlier log of the same block, got 0x12`,
    ]);
    // a new block starts afresh; times beyond the dates a Date holds are compared too
    const far = '0x1fffffffffffff';
    const query = { contracts: [USDC], fromBlock: 17_000_000, toBlock: 17_000_099 };
    const agreeing = [at(17_000_000, 0, { blockTimestamp: '0x10' }), at(17_000_001, 0, { blockTimestamp: far }), at(17_000_001, 1, { blockTimestamp: far })];
    expect(readLogsAnswer(agreeing, query).transfers).toHaveLength(3);
    expect(answerProblems([at(17_000_001, 0, { blockTimestamp: far }), at(17_000_001, 1, { blockTimestamp: '0x1ffffffffffffe' })])).toEqual([
      `contract ${USDC}, block 17000001, log 1, result[1].blockTimestamp: expected ${far} as in an earlier log of the same block, got 0x1ffffffffffffe`,
    ]);
  });

  it('lists the bad logs of an answer with their place, and refuses an answer that is not an array', () => {
    expect(answerProblems([at(17_000_000, 0), at(17_000_000, 1, { data: 5 })])).toEqual([`contract ${USDC}, block 17000000, log 1, data: expected 0x hex bytes, got 5`]);
    expect(answerProblems([at(17_000_000, 0), 'log'])).toEqual(['result[1]: expected a log object, got "log"']);
    expect(answerProblems({ logs: [] }, { contracts: [USDC, a('9')], fromBlock: 5, toBlock: 5 })).toEqual([
      '2 contracts, block 5, result: expected an array of logs, got {"logs":[]}',
    ]);
    expect(() => readLogsAnswer(null, { contracts: [USDC], fromBlock: 1, toBlock: 9 })).toThrow(
      `eth_getLogs answered a malformed result for contract ${USDC}, blocks 1–9 (1 problem):\n  contract ${USDC}, blocks 1–9, result: expected an array of logs, got null`,
    );
  });
});

describe('block time', () => {
  it('gives a header’s timestamp as the builder source’s ISO time with milliseconds', () => {
    expect(blockTimestampOf('0x6431dbe3')).toBe('2023-04-08T21:25:55.000Z');
    expect(blockTimestampOf('0x0')).toBe('1970-01-01T00:00:00.000Z');
    expect(() => blockTimestampOf('0x01')).toThrow(RangeError);
    expect(() => blockTimestampOf('0xfffffffffffff')).toThrow(RangeError);
  });

  it('checks a log’s own blockTimestamp against its header’s time', () => {
    const log = read(rawLog({ blockTimestamp: '0x6431dbe3' })).reading as TransferLog;
    expect(logTimestampProblem(log, '2023-04-08T21:25:55.000Z')).toBeUndefined();
    expect(logTimestampProblem(log, '2023-04-08T21:25:54.000Z')).toBe(
      `contract ${USDC}, block 17000000, log 5, blockTimestamp: expected 0x6431dbe2 (2023-04-08T21:25:54.000Z, the block header's time), got 0x6431dbe3 (2023-04-08T21:25:55.000Z)`,
    );
    expect(logTimestampProblem(read(rawLog()).reading as TransferLog, '2023-04-08T21:25:54.000Z')).toBeUndefined();
  });
});
