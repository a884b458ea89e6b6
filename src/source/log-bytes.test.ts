import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURE_DIR } from '../../test/helpers/fixtures.ts';
import type { TransferRecord } from '../dataset/types.ts';
import { createRng } from '../devnet/rng.ts';
import { TRANSFER_TOPIC } from '../eth/logs-bloom.ts';
import { jsonText } from './json-text.ts';
import { readLogBytes } from './log-bytes.ts';
import { createResultStream } from './result-stream.ts';
import { a, h } from './test-rows.ts';
import { readLogElement } from './transfer-log.ts';

const topicOf = (address: string) => `0x${'0'.repeat(24)}${address.slice(2)}`;
const word = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;

/** A log as a node answers `eth_getLogs`: a transfer of `value` from a('1') to a('2') in block 17000000. */
function log(overrides: Record<string, unknown> = {}, value = 1_000_000n): Record<string, unknown> {
  return {
    address: a('c'),
    topics: [TRANSFER_TOPIC, topicOf(a('1')), topicOf(a('2'))],
    data: word(value),
    blockNumber: '0x1036640',
    blockHash: h('b'),
    blockTimestamp: '0x6431dbe3',
    transactionHash: h('d'),
    transactionIndex: '0x3',
    logIndex: '0x5',
    removed: false,
    ...overrides,
  };
}

/** What the parse path makes of a group's text: each log `JSON.parse` gives, read by `readLogElement`; or `refused`. */
function parsed(text: string): unknown {
  try {
    return (JSON.parse(jsonText([Buffer.from(`[${text}]`)])) as unknown[]).map((l, i) => readLogElement(l, i));
  } catch {
    return 'refused';
  }
}

/** `readLogBytes` of a group's text, `count` logs, with other bytes around it (the reader keeps to its part). */
function direct(text: string, count: number) {
  const bytes = Buffer.concat([Buffer.from('}]x'), Buffer.from(text), Buffer.from('[{,')]);
  return readLogBytes(bytes, 3, bytes.length - 3, count);
}

/** Damaged groups tried (more by hand: `FUZZ_ROUNDS=300000 npx vitest run src/source/log-bytes.test.ts`). */
const FUZZ_ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 4000);

const group = (logs: readonly unknown[]) => logs.map((l) => JSON.stringify(l)).join(',');

describe('readLogBytes', () => {
  it('reads transfers, ERC-721 and other shapes, removed logs and logs without a block time as readLogElement reads them parsed', () => {
    const logs = [
      log(),
      log({ logIndex: '0x6', transactionHash: h('e') }),
      log({ topics: [TRANSFER_TOPIC, topicOf(a('1')), topicOf(a('2')), word(7n)], data: '0x' }),
      log({ data: `${word(1n)}${word(2n).slice(2)}` }),
      log({ topics: [TRANSFER_TOPIC], data: `${word(1n)}${word(2n).slice(2)}${word(3n).slice(2)}` }),
      log({ removed: true }),
      log({ blockTimestamp: null, blockNumber: '0x1036641', blockHash: h('a'), logIndex: '0x0' }),
      log({ removed: undefined, blockTimestamp: undefined, logIndex: '0x0', transactionIndex: '0x0' }),
      log({ topics: [TRANSFER_TOPIC, h('f'), h('e')], removed: true }),
    ];
    const text = group(logs);
    const read = direct(text, logs.length);
    expect(read).toBeDefined();
    expect(read).toEqual(parsed(text));
    expect(read!.map((r) => r.kind)).toEqual(['transfer', 'transfer', 'skipped', 'skipped', 'skipped', 'removed', 'transfer', 'transfer', 'removed']);
  });

  it('reads mixed-case hex, spaces and new lines between tokens, fields in any order and fields it does not know, as the parse does', () => {
    const upper = (s: string) => `0x${s.slice(2).toUpperCase()}`;
    const logs = [
      log({ address: upper(a('c')), blockHash: upper(h('b')), transactionHash: upper(h('d')), blockNumber: '0x1036A4F', data: upper(word(255n)) }),
      log({ topics: [upper(TRANSFER_TOPIC), upper(topicOf(a('e'))), topicOf(a('f'))] }),
      {
        logIndex: '0x9',
        transactionIndex: '0x1',
        transactionHash: h('9'),
        removed: false,
        data: word(3n),
        topics: log().topics,
        blockHash: h('b'),
        blockNumber: '0x1036a4f',
        address: a('c'),
      },
      log({ type: 'mined', transactionLogIndex: '0x0', blockTimestamp: null, pending: false, extra: null }),
    ];
    const spaced = JSON.stringify(logs, null, 2).slice(1, -1);
    const read = direct(spaced, logs.length);
    expect(read).toBeDefined();
    expect(read).toEqual(parsed(spaced));
    // lower-cased as the parse path lower-cases them
    expect(read![0]).toMatchObject({ transfer: { contractAddress: a('c'), blockHash: h('b'), blockNumber: 0x1036a4f, value: '255' } });
    expect(read![1]).toMatchObject({ transfer: { fromAddress: a('e'), toAddress: a('f') } });
  });

  it('reads every transfer of the mainnet fixture, served as logs, as the parse path reads it', () => {
    const rows = readFileSync(join(FIXTURE_DIR, 'transfers.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as TransferRecord);
    const hex = (n: number) => `0x${n.toString(16)}`;
    const logs = rows.map((r) =>
      log(
        {
          address: r.contractAddress,
          topics: [TRANSFER_TOPIC, topicOf(r.fromAddress), topicOf(r.toAddress)],
          blockNumber: hex(r.blockNumber),
          blockHash: r.blockHash,
          blockTimestamp: undefined,
          transactionHash: r.transactionHash,
          transactionIndex: hex(r.transactionIndex),
          logIndex: hex(r.logIndex),
        },
        BigInt(r.value),
      ),
    );
    const text = group(logs);
    const read = direct(text, logs.length);
    expect(read).toHaveLength(910);
    expect(read).toEqual(parsed(text));
  });

  it('gives the decimal text of every uint256 as BigInt does, through a number or not', () => {
    const values = [0n, 1n, 2n ** 52n - 1n, 2n ** 52n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 16n ** 13n - 1n, 16n ** 13n, 10n ** 18n, 2n ** 256n - 1n];
    const rng = createRng(7);
    for (let i = 0; i < 200; i++) values.push(BigInt(`0x${Array.from({ length: 1 + rng.int(0, 64 - 1) }, () => '0123456789abcdef'[rng.int(0, 16 - 1)]).join('')}`));
    const text = group(values.map((v) => log({}, v)));
    const read = direct(text, values.length);
    expect(read!.map((r) => (r.kind === 'transfer' ? r.transfer.value : r.kind))).toEqual(values.map((v) => v.toString()));
  });

  it.each([
    ['an escape in a field', JSON.stringify(log()).replace('"0x1036640"', '"0x103664\\u0030"')],
    ['an escape in a field it does not know', JSON.stringify(log({ note: 'a"b' }))],
    ['non-ASCII in a field it does not know', JSON.stringify(log({ note: 'Éther' }))],
    ['a number in a field it does not know', JSON.stringify(log({ note: 7 }))],
    ['an object in a field it does not know', JSON.stringify(log({ note: { a: 1 } }))],
    ['a field twice (JSON.parse keeps the last)', JSON.stringify(log()).replace('{', `{"logIndex":"0x9",`)],
    ['a field missing', JSON.stringify(log({ transactionIndex: undefined }))],
    ['a block number as a JSON number', JSON.stringify(log({ blockNumber: 17_000_000 }))],
    ['a quantity with a leading zero', JSON.stringify(log({ logIndex: '0x05' }))],
    ['a quantity of 2^53', JSON.stringify(log({ blockNumber: '0x20000000000000' }))],
    ['a quantity in upper-case 0X', JSON.stringify(log({ blockNumber: '0X1036640' }))],
    ['an address of 39 digits', JSON.stringify(log({ address: a('c').slice(0, -1) }))],
    ['a hash with a letter past f', JSON.stringify(log({ blockHash: `${h('b').slice(0, -1)}g` }))],
    ['data of an odd length', JSON.stringify(log({ data: `${word(1n)}0` }))],
    ['data not whole 32-byte words', JSON.stringify(log({ data: `${word(1n)}00` }))],
    ['another event’s topic', JSON.stringify(log({ topics: [h('e'), topicOf(a('1')), topicOf(a('2'))] }))],
    ['no topics', JSON.stringify(log({ topics: [] }))],
    ['a topic that is not a string', JSON.stringify(log({ topics: [TRANSFER_TOPIC, null, topicOf(a('2'))] }))],
    ['a transfer whose from topic has bits in its first 12 bytes', JSON.stringify(log({ topics: [TRANSFER_TOPIC, h('1'), topicOf(a('2'))] }))],
    ['removed as null', JSON.stringify(log({ removed: null }))],
    ['a block time that is no quantity', JSON.stringify(log({ blockTimestamp: 'soon' }))],
    ['removed as a string', JSON.stringify(log({ removed: 'true' }))],
    ['a literal run on', JSON.stringify(log()).replace('"removed":false', '"removed":falsey')],
    ['topics twice', JSON.stringify(log()).replace('{', `{"topics":[],`)],
    // a quote where an address usually ends, inside a longer text (escaped) or after a shorter one (the next key's)
    ['an address with an escaped quote where an address ends', JSON.stringify(log({ address: `${a('c').slice(0, -1)}"ab` }))],
    ['a short address and a quote where an address ends', JSON.stringify(log({ address: '0x1' })).replace('"0x1",', `"0x1","pad":"${'y'.repeat(30)}",`)],
    ['a log that is not an object', '[1,2]'],
    ['an empty object', '{}'],
    ['a comma after the last field', JSON.stringify(log()).replace(/}$/, ',}')],
    ['something after the log', `${JSON.stringify(log())} x`],
  ])('leaves to the parse path a group with %s', (_what, text) => {
    expect(direct(text, 1)).toBeUndefined();
    // and the group of it with good logs around it
    expect(direct(group([log(), JSON.parse('0')]).replace(',0', `,${text}`), 2)).toBeUndefined();
  });

  it('reads the largest quantity a number holds exactly, 2^53 - 1', () => {
    const text = JSON.stringify(log({ blockNumber: '0x1fffffffffffff', logIndex: '0x0' }));
    const read = direct(text, 1);
    expect(read).toEqual(parsed(text));
    expect(read![0]).toMatchObject({ transfer: { blockNumber: 2 ** 53 - 1, logIndex: 0 } });
  });

  it('reads no other number of logs than the group holds', () => {
    const text = group([log(), log({ logIndex: '0x6' })]);
    expect(direct(text, 2)).toHaveLength(2);
    expect(direct(text, 1)).toBeUndefined();
    expect(direct(text, 3)).toBeUndefined();
  });

  it('never reads a group otherwise than the parse path, for thousands of damaged groups', () => {
    const rng = createRng(11);
    const base = group([log(), log({ topics: [TRANSFER_TOPIC, topicOf(a('1')), topicOf(a('2')), word(9n)], data: '0x' }), log({ removed: true })]);
    const alphabet = '0123456789abcdefABCDEF xX",:{}[]\\ntruefalsenull\u00e9';
    let readDirectly = 0;
    for (let i = 0; i < FUZZ_ROUNDS; i++) {
      const chars = [...base];
      for (let k = 1 + rng.int(0, 3 - 1); k > 0; k--) {
        const at = rng.int(0, chars.length - 1);
        const c = alphabet[rng.int(0, alphabet.length - 1)]!;
        const kind = rng.int(0, 3 - 1);
        if (kind === 0) chars[at] = c;
        else if (kind === 1) chars.splice(at, 0, c);
        else chars.splice(at, 1);
      }
      const text = chars.join('');
      const read = direct(text, 3);
      if (read === undefined) continue;
      readDirectly++;
      expect(read, text).toEqual(parsed(text));
    }
    // most damage that keeps a log valid changes a hex digit: such groups are read here, and must agree
    expect(readDirectly).toBeGreaterThan(200);
  });
});

describe('a result stream whose reader reads bytes', () => {
  it('reads an answer’s logs from their bytes as they come, as JSON.parse and the reader give them', () => {
    const logs = Array.from({ length: 3000 }, (_, i) => log({ logIndex: `0x${i.toString(16)}`, blockTimestamp: i % 2 ? null : '0x6431dbe3' }));
    // one log of a shape the bytes reader leaves to the parse path: its group is parsed
    logs[1700] = log({ logIndex: '0x6a4', note: 'Éther ✓' });
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: logs }));
    let fromBytes = 0;
    const reader = Object.assign((value: unknown, index: number) => readLogElement(value, index), {
      fromBytes: (bytes: Buffer, from: number, to: number, count: number) => {
        const read = readLogBytes(bytes, from, to, count);
        if (read) fromBytes += count;
        return read;
      },
    });
    const stream = createResultStream(reader);
    for (let i = 0; i < body.length; i += 7001) stream.push(body.subarray(i, i + 7001));
    const end = stream.end();
    expect(end).toEqual({ value: { jsonrpc: '2.0', id: 1, result: logs.map((l, i) => readLogElement(l, i)) } });
    expect(fromBytes).toBeGreaterThan(2500);
    expect(fromBytes).toBeLessThan(3000);
  });
});
