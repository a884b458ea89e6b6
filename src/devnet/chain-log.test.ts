import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { decodeEventLog, parseAbiItem } from 'viem';
import { describe, expect, it } from 'vitest';
import type { TransferRecord } from '../dataset/types.ts';
import { addressTopic, rpcLog, TRANSFER_TOPIC, transferLog, uint256Word } from './chain-log.ts';

const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

const row: TransferRecord = {
  contractAddress: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
  fromAddress: '0x28c6c06298d514db089934071355e5743bf21d60',
  toAddress: '0x0000000000000000000000000000000000000000',
  value: '115792089237316195423570985008687907853269984665640564039457584007913129639935',
  blockHash: `0x${'ab'.repeat(32)}`,
  blockNumber: 17_000_000,
  blockTimestamp: '2023-04-08T21:26:11.000Z',
  transactionHash: `0x${'cd'.repeat(32)}`,
  transactionIndex: 3,
  logIndex: 12,
};

describe('a transfer row as a log', () => {
  it('topic 0 is keccak256 of the ERC-20 Transfer signature', () => {
    expect(`0x${bytesToHex(keccak_256(new TextEncoder().encode('Transfer(address,address,uint256)')))}`).toBe(TRANSFER_TOPIC);
  });

  it('puts from and to in topics 1 and 2, padded to 32 bytes, and the value in 32 bytes of data', () => {
    const log = transferLog(row);
    expect(log.topics).toEqual([TRANSFER_TOPIC, addressTopic(row.fromAddress), addressTopic(row.toAddress)]);
    expect(log.topics[1]).toBe('0x00000000000000000000000028c6c06298d514db089934071355e5743bf21d60');
    expect(log.data).toBe(`0x${'f'.repeat(64)}`);
    expect(uint256Word(255n)).toBe(`${'0'.repeat(62)}ff`);
  });

  it('decodes back to the row with viem', () => {
    const log = transferLog({ ...row, value: '1000000' });
    const decoded = decodeEventLog({ abi: [TRANSFER_EVENT], topics: log.topics as [`0x${string}`], data: log.data as `0x${string}` });
    expect(decoded.args).toEqual({ from: '0x28C6c06298d514Db089934071355E5743bf21d60', to: '0x0000000000000000000000000000000000000000', value: 1_000_000n });
  });

  it('is answered with hex quantities, the block time and removed: false, in geth key order', () => {
    expect(rpcLog(transferLog(row))).toEqual({
      address: row.contractAddress,
      topics: transferLog(row).topics,
      data: `0x${'f'.repeat(64)}`,
      blockNumber: '0x1036640',
      blockHash: row.blockHash,
      blockTimestamp: `0x${(Date.parse(row.blockTimestamp) / 1000).toString(16)}`,
      transactionHash: row.transactionHash,
      transactionIndex: '0x3',
      logIndex: '0xc',
      removed: false,
    });
  });

  it('cannot be changed once made', () => {
    const log = rpcLog(transferLog(row));
    expect(() => Object.assign(log, { data: '"' })).toThrow(TypeError);
    expect(() => (log.topics as string[]).push('"')).toThrow(TypeError);
  });
});
