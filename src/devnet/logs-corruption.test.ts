import { hexToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { bloomBits, bloomHasBits, TRANSFER_TOPIC } from '../eth/logs-bloom.ts';
import { rpcLog } from './chain-log.ts';
import { createChainStore } from './chain-store.ts';
import { LOGS_CORRUPTIONS } from './corruption.ts';
import { syntheticForeignLogs } from './foreign-logs.ts';
import { corruptLogs, type LogJson, type LogsCall } from './logs-corruption.ts';
import { generateSyntheticDataset } from './synthetic.ts';

const OPTIONS = { seed: 5, blocks: 80, tokens: 3, transfers: 600, startBlock: 1000 };
const chain = createChainStore(generateSyntheticDataset(OPTIONS), syntheticForeignLogs(OPTIONS));
const contract = chain.contracts().sort((a, b) => b.transfers - a.transfers)[0]!.contractAddress;
const isTransfer = (l: { topics: readonly unknown[]; data: unknown }) => l.topics.length === 3 && (l.data as string).length === 66;
/** An emitter of logs of other shapes (ERC-721, …) in the blocks asked: the answer holds both kinds of log. */
const foreign = chain.logs(1020, 1059).find((l) => !isTransfer(l))!.address;
const call: LogsCall = { from: 1020, to: 1059, addresses: new Set([contract, foreign]), topics: [new Set([TRANSFER_TOPIC])] };
const answer = (c: LogsCall = call): LogJson[] => chain.logs(c.from, c.to, c.addresses).map((l) => ({ ...rpcLog(l) }));
const n = (quantity: unknown) => Number(BigInt(quantity as string));
const position = (l: LogJson) => [n(l.blockNumber), n(l.logIndex)] as const;
const inChainOrder = (logs: readonly LogJson[]) =>
  logs.every((l, i) => i === 0 || position(logs[i - 1]!)[0] < position(l)[0] || (position(logs[i - 1]!)[0] === position(l)[0] && position(logs[i - 1]!)[1] < position(l)[1]));

describe('corruptLogs', () => {
  const logs = answer();
  const transfers = logs.flatMap((l, i) => (isTransfer(l as { topics: unknown[]; data: unknown }) ? [i] : []));
  const i = transfers[Math.floor((transfers.length - 1) / 2)]!;
  const middle = logs[i]!;

  it('the answer used here holds transfers and other shapes of log, in chain order', () => {
    expect(transfers.length).toBeGreaterThan(10);
    expect(transfers.length).toBeLessThan(logs.length);
    expect(inChainOrder(logs)).toBe(true);
  });

  it.each([
    ['logs-bad-address', 'topics', (v: unknown) => expect((v as string[])[1]).toMatch(/^0xff0{22}[0-9a-f]{40}$/)],
    ['logs-non-hex-value', 'data', (v: unknown) => expect(v).toBe(BigInt(middle.data as string).toString())],
    ['logs-short-value', 'data', (v: unknown) => expect(v).toMatch(/^0x[0-9a-f]{62}$/)],
    ['logs-missing-field', 'transactionHash', (v: unknown) => expect(v).toBeUndefined()],
  ] as const)('%s damages %s of the middle transfer log and nothing else, leaving the input alone', (kind, field, check) => {
    const before = JSON.stringify(logs);
    const result = corruptLogs(kind, logs, call, chain)!;
    check(result.logs[i]![field]);
    expect(result).toMatchObject({ block: n(middle.blockNumber), log: n(middle.logIndex), field: `result[${i}].${field === 'topics' ? 'topics[1]' : field}` });
    const { [field]: _, ...rest } = result.logs[i]!;
    const { [field]: __, ...restBefore } = middle;
    expect(rest).toEqual(restBefore);
    expect(result.logs.filter((_, j) => j !== i)).toEqual(logs.filter((_, j) => j !== i));
    expect(JSON.stringify(logs)).toBe(before);
  });

  it('logs-bad-timestamp makes every log of the block say one second later than its header, and no other', () => {
    const { logs: bad, field } = corruptLogs('logs-bad-timestamp', logs, call, chain)!;
    const header = chain.headerByNumber(n(middle.blockNumber))!;
    expect(field).toBe(`result[${i}].blockTimestamp`);
    bad.forEach((l, j) => {
      const expected = l.blockNumber === middle.blockNumber ? BigInt(header.timestamp!) + 1n : BigInt(logs[j]!.blockTimestamp as string);
      expect(BigInt(l.blockTimestamp as string)).toBe(expected);
    });
  });

  it('logs-duplicate answers the middle transfer log twice in a row', () => {
    const { logs: bad, field } = corruptLogs('logs-duplicate', logs, call, chain)!;
    expect(bad).toEqual([...logs.slice(0, i + 1), middle, ...logs.slice(i + 1)]);
    expect(field).toBe(`result[${i + 1}]`);
  });

  it('logs-outside-range adds a copy of a log at the block below the blocks asked, with that block’s hash and time', () => {
    const result = corruptLogs('logs-outside-range', logs, call, chain)!;
    const header = chain.headerByNumber(call.from - 1)!;
    expect(result).toMatchObject({ block: call.from - 1, field: 'result[0].blockNumber' });
    expect(result.logs[0]).toMatchObject({ blockNumber: `0x${(call.from - 1).toString(16)}`, blockHash: header.hash, blockTimestamp: header.timestamp });
    expect(result.logs.slice(1)).toEqual(logs);
    // from block 0, above them instead
    const fromZero = { ...call, from: 0, to: 1009 };
    const above = corruptLogs('logs-outside-range', answer(fromZero), fromZero, chain)!;
    expect(above).toMatchObject({ block: 1010, field: `result[${above.logs.length - 1}].blockNumber` });
  });

  it('logs-other-contract adds another emitter’s log of the blocks asked, in chain order', () => {
    const result = corruptLogs('logs-other-contract', logs, call, chain)!;
    const added = result.logs.find((l) => !call.addresses!.has(l.address as string))!;
    expect(result.field).toBe(`result[${result.logs.indexOf(added)}].address`);
    expect(added.topics).toContain(TRANSFER_TOPIC);
    expect(n(added.blockNumber)).toBe(result.block);
    expect(result.block).toBeGreaterThanOrEqual(call.from);
    expect(result.block).toBeLessThanOrEqual(call.to);
    expect(result.logs.filter((l) => l !== added)).toEqual(logs);
    expect(inChainOrder(result.logs)).toBe(true);
    // every emitter asked: no log can be another's
    expect(corruptLogs('logs-other-contract', logs, { ...call, addresses: undefined }, chain)).toBeUndefined();
  });

  it('logs-bloom moves the middle transfer log to another block asked whose header’s bloom rules its contract out', () => {
    const result = corruptLogs('logs-bloom', logs, call, chain)!;
    const header = chain.headerByNumber(result.block)!;
    const moved = result.logs.find((l) => l.blockHash === header.hash)!;
    expect(result.block).not.toBe(n(middle.blockNumber));
    expect(moved).toEqual({ ...middle, blockNumber: header.number, blockHash: header.hash, blockTimestamp: header.timestamp });
    expect(bloomHasBits(hexToBytes(header.logsBloom!.slice(2)), bloomBits(hexToBytes(contract.slice(2))))).toBe(false);
    expect(result.field).toBe(`result[${result.logs.indexOf(moved)}].blockHash`);
    expect(result.logs.length).toBe(logs.length);
    expect(inChainOrder(result.logs)).toBe(true);
  });

  it.each(LOGS_CORRUPTIONS)('%s does not apply to an answer without a transfer log', (kind) => {
    expect(corruptLogs(kind, [], call, chain)).toBeUndefined();
    expect(
      corruptLogs(
        kind,
        logs.filter((l) => !isTransfer(l as { topics: unknown[]; data: unknown })),
        call,
        chain,
      ),
    ).toBeUndefined();
  });
});
