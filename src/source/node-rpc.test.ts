import { describe, expect, it } from 'vitest';
import { TRANSFER_TOPIC } from '../eth/logs-bloom.ts';
import { createLogsReader } from './node-rpc.ts';
import { a, h } from './test-rows.ts';
import { readLogElement } from './transfer-log.ts';

const log = (i: number) => ({
  address: a('c'),
  topics: [TRANSFER_TOPIC, `0x${'0'.repeat(24)}${a('1').slice(2)}`, `0x${'0'.repeat(24)}${a('2').slice(2)}`],
  data: `0x${i.toString(16).padStart(64, '0')}`,
  blockNumber: '0x1036640',
  blockHash: h('b'),
  transactionHash: h('d'),
  transactionIndex: '0x3',
  logIndex: `0x${i.toString(16)}`,
  removed: false,
});

describe('createLogsReader', () => {
  it('keeps each log at its index, whether read from its group’s bytes or parsed, and starts again with an answer read again', () => {
    const reader = createLogsReader();
    const bytes = Buffer.from(`${JSON.stringify(log(0))},${JSON.stringify(log(1))}`);
    expect(reader.element.fromBytes!(bytes, 0, bytes.length, 2, 0)).toEqual([undefined, undefined]);
    const third = Buffer.from(` ${JSON.stringify(log(2))} `);
    expect(reader.element.fromBytes!(third, 0, third.length, 1, 2)).toEqual([undefined]);
    // a log of a shape left to the parse: given back, read at its index
    expect(reader.element(log(3), 3)).toBeUndefined();
    expect(reader.read()).toEqual([0, 1, 2, 3].map((i) => readLogElement(log(i), i)));
    // the same answer read again (a retried request): from its first log
    expect(reader.element.fromBytes!(bytes, 0, bytes.length, 1, 0)).toBeUndefined();
    const first = Buffer.from(JSON.stringify(log(5)));
    reader.element.fromBytes!(first, 0, first.length, 1, 0);
    expect(reader.read()).toEqual([readLogElement(log(5), 0)]);
  });
});
