import { HEX_CODES, hexDigitValue } from '../eth/hex.ts';
import { TRANSFER_TOPIC } from '../eth/logs-bloom.ts';
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from './json-body.ts';
import type { LogReading } from './transfer-log.ts';

/**
 * The logs of an `eth_getLogs` answer read straight from their JSON bytes, for the plain shape nodes answer in: each
 * log an object whose values are strings, `true`, `false` or `null` (and `topics` an array of strings), no escapes
 * and nothing but ASCII in its strings, every field `readTransferLog` needs there once and valid. What it gives is what
 * `readLogElement` gives for the parsed log, value for value. Any log outside that shape, or one `readTransferLog`
 * would find a problem in, makes it give up on the whole group (nothing read): the caller parses the group and reads
 * each log as before, so an answer's problems are named in the same words.
 *
 * Why: a node run of 1,000,000 transfers allocated 6.4–6.8 GB in its young generation (680–685 scavenges, 2.7–3.3 s
 * of their pauses, in six hand loads); by V8's sampling heap profiler about a third of what it allocated was the text of
 * each group of logs made for `JSON.parse` and the objects `JSON.parse` made of it. Per log this reader takes a little
 * less CPU than the parse (3.1–3.2 µs against 3.8 µs in a microbenchmark; an earlier one was slower, bench/NOTES.md,
 * "A fourteenth day"); what it saves most is the garbage collector's work ("A twenty-sixth day").
 */

/** The fields read, each a bit of a log's `seen` mask (a field twice gives up: `JSON.parse` would keep the last). */
const ADDRESS = 1;
const TOPICS = 2;
const DATA = 4;
const BLOCK_NUMBER = 8;
const BLOCK_HASH = 16;
const BLOCK_TIMESTAMP = 32;
const TRANSACTION_HASH = 64;
const TRANSACTION_INDEX = 128;
const LOG_INDEX = 256;
const REMOVED = 512;
/** A field's place in `Fields.starts` and `Fields.ends`: the number of its bit. */
const slot = (bit: number) => 31 - Math.clz32(bit);

const REQUIRED = ADDRESS | TOPICS | DATA | BLOCK_NUMBER | BLOCK_HASH | TRANSACTION_HASH | TRANSACTION_INDEX | LOG_INDEX;

/**
 * Each field's name, bit, and the usual length of its text: an address 42, a hash or a word of data 66, 0 for any. A
 * field's text is checked byte by byte later (hex digits only), so a quote where it usually ends is taken as its end
 * without reading up to it: a quote or backslash inside the text would not pass that check.
 */
const KEYS: readonly [string, number, number][] = [
  ['address', ADDRESS, 42],
  ['topics', TOPICS, 0],
  ['data', DATA, 66],
  ['blockNumber', BLOCK_NUMBER, 0],
  ['blockHash', BLOCK_HASH, 66],
  ['blockTimestamp', BLOCK_TIMESTAMP, 0],
  ['transactionHash', TRANSACTION_HASH, 66],
  ['transactionIndex', TRANSACTION_INDEX, 0],
  ['logIndex', LOG_INDEX, 0],
  ['removed', REMOVED, 0],
];
/** The fields by the length of their name (a call into Buffer's `compare` per key cost more than the rest of a key's reading). */
const KEYS_BY_LENGTH: { bytes: Uint8Array; bit: number }[][] = [];
/** The usual length of each field's text, by its slot (`slot`). */
const TEXT_LENGTHS: number[] = [];
for (const [k, bit, length] of KEYS) {
  const same = KEYS_BY_LENGTH[k.length] ?? [];
  same.push({ bytes: Buffer.from(k, 'latin1'), bit });
  KEYS_BY_LENGTH[k.length] = same;
  TEXT_LENGTHS[slot(bit)] = length;
}

/** Topics a log may have here; more give up (`readTransferLog` takes any number, as a skipped log). */
const MOST_TOPICS = 8;

const COLON = 0x3a;
const ZERO = 0x30;
const LOWER_X = 0x78;

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');
const TRANSFER = Buffer.from(TRANSFER_TOPIC, 'latin1');

/** Gave up: the group is parsed instead. Thrown within the reader only. */
const GIVE_UP = Symbol('give up');

/**
 * A log's fields as places in the bytes: a string's text (quotes excluded) from `start` to `end`; a literal's
 * `start` at its first letter and `end` −1 for `null`, −2 for `true`, −3 for `false`.
 */
interface Fields {
  seen: number;
  starts: Int32Array;
  ends: Int32Array;
  topicCount: number;
  topicStarts: Int32Array;
}

/**
 * `readLogElement` of each of the `count` logs in `bytes[from, to)` (the logs and the commas between them), or
 * undefined when any of them is not of the plain shape or not a valid log (see the module's comment).
 *
 * @example readLogBytes(Buffer.from('{"address":"0xa0b8…","topics":[…],"data":"0x…","blockNumber":"0x1036640",…}'), 0, n, 1)
 * // → [{ kind: 'transfer', transfer: { contractAddress: '0xa0b8…', … }, logTimestamp: undefined }]
 */
export function readLogBytes(bytes: Buffer, from: number, to: number, count: number): LogReading[] | undefined {
  const fields: Fields = { seen: 0, starts: new Int32Array(10), ends: new Int32Array(10), topicCount: 0, topicStarts: new Int32Array(MOST_TOPICS) };
  const out: LogReading[] = [];
  // a block's logs are adjacent: each takes its block hash's text from the log before it when the bytes agree
  const shared = { hashAt: -1, hash: '' };
  const scratch = Buffer.allocUnsafe(42);
  try {
    let at = from;
    for (let n = 0; n < count; n++) {
      at = skipSpace(bytes, at, to);
      if (n > 0) {
        if (byteAt(bytes, at, to) !== COMMA) return undefined;
        at = skipSpace(bytes, at + 1, to);
      }
      at = readObject(bytes, at, to, fields);
      out.push(reading(bytes, fields, shared, scratch));
    }
    return skipSpace(bytes, at, to) === to ? out : undefined;
  } catch (err) {
    if (err === GIVE_UP) return undefined;
    throw err;
  }
}

/** The byte at `at`, or −1 past the range: nothing beyond `to` is read. */
function byteAt(bytes: Buffer, at: number, to: number): number {
  return at < to ? bytes[at]! : -1;
}

function skipSpace(bytes: Buffer, at: number, to: number): number {
  while (at < to) {
    const b = bytes[at]!;
    if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) break;
    at++;
  }
  return at;
}

/** The end of the string whose text starts at `at` (its closing quote's place); gives up on anything but plain ASCII. */
function stringEnd(bytes: Buffer, at: number, to: number): number {
  for (; at < to; at++) {
    const b = bytes[at]!;
    if (b === QUOTE) return at;
    // escapes, control bytes (refused by JSON.parse) and UTF-8 (decoded by the parse path) are left to the parse
    if (b === BACKSLASH || b < 0x20 || b >= 0x80) throw GIVE_UP;
  }
  throw GIVE_UP;
}

/** Whether `bytes` from `at` hold `word`. */
function holds(bytes: Buffer, at: number, to: number, word: Uint8Array): boolean {
  if (at + word.length > to) return false;
  for (let i = 0; i < word.length; i++) if (bytes[at + i] !== word[i]) return false;
  return true;
}

/** The end of the text starting at `at` (its closing quote's place), looked for first where a text of `length` ends. */
function textEnd(bytes: Buffer, at: number, to: number, length: number): number {
  return length > 0 && at + length < to && bytes[at + length] === QUOTE ? at + length : stringEnd(bytes, at, to);
}

/** `true`, `false` or `null` at `at`: its code (−2, −3, −1), or 0 for none. */
function literal(bytes: Buffer, at: number, to: number): number {
  const b = bytes[at];
  if (b === 0x74) return holds(bytes, at, to, TRUE) ? -2 : 0;
  if (b === 0x66) return holds(bytes, at, to, FALSE) ? -3 : 0;
  if (b === 0x6e) return holds(bytes, at, to, NULL) ? -1 : 0;
  return 0;
}

/** The field bit of the key whose text is `bytes[start, end)`, or 0 for a key not read. */
function keyBit(bytes: Buffer, start: number, end: number): number {
  const keys = KEYS_BY_LENGTH[end - start];
  if (keys === undefined) return 0;
  for (const k of keys) if (holds(bytes, start, end, k.bytes)) return k.bit;
  return 0;
}

/** Reads the object at `at` into `fields`; the place after it. */
function readObject(bytes: Buffer, at: number, to: number, fields: Fields): number {
  if (byteAt(bytes, at, to) !== OPEN_OBJECT) throw GIVE_UP;
  fields.seen = 0;
  fields.topicCount = 0;
  at = skipSpace(bytes, at + 1, to);
  if (byteAt(bytes, at, to) === CLOSE_OBJECT) return at + 1;
  for (;;) {
    if (byteAt(bytes, at, to) !== QUOTE) throw GIVE_UP;
    const keyEnd = stringEnd(bytes, at + 1, to);
    const bit = keyBit(bytes, at + 1, keyEnd);
    at = skipSpace(bytes, keyEnd + 1, to);
    if (byteAt(bytes, at, to) !== COLON) throw GIVE_UP;
    at = skipSpace(bytes, at + 1, to);
    if (bit & fields.seen) throw GIVE_UP;
    fields.seen |= bit;
    const i = bit ? slot(bit) : 0;
    if (bit === TOPICS) at = readTopics(bytes, at, to, fields);
    else if (byteAt(bytes, at, to) === QUOTE) {
      const end = textEnd(bytes, at + 1, to, bit ? TEXT_LENGTHS[i]! : 0);
      if (bit) {
        fields.starts[i] = at + 1;
        fields.ends[i] = end;
      }
      at = end + 1;
    } else {
      const code = literal(bytes, at, to);
      if (code === 0) throw GIVE_UP;
      if (bit) {
        fields.starts[i] = at;
        fields.ends[i] = code;
      }
      at += code === -3 ? 5 : 4;
    }
    at = skipSpace(bytes, at, to);
    if (byteAt(bytes, at, to) === CLOSE_OBJECT) return at + 1;
    if (byteAt(bytes, at, to) !== COMMA) throw GIVE_UP;
    at = skipSpace(bytes, at + 1, to);
  }
}

/** Reads `topics`' array of strings at `at`; the place after it. */
function readTopics(bytes: Buffer, at: number, to: number, fields: Fields): number {
  if (byteAt(bytes, at, to) !== OPEN_ARRAY) throw GIVE_UP;
  at = skipSpace(bytes, at + 1, to);
  if (byteAt(bytes, at, to) === CLOSE_ARRAY) return at + 1;
  for (;;) {
    if (byteAt(bytes, at, to) !== QUOTE || fields.topicCount === MOST_TOPICS) throw GIVE_UP;
    const end = textEnd(bytes, at + 1, to, 66);
    // every topic is 66 bytes of text or gives up below: its start is enough
    if (end - at - 1 !== 66) throw GIVE_UP;
    fields.topicStarts[fields.topicCount++] = at + 1;
    at = skipSpace(bytes, end + 1, to);
    if (byteAt(bytes, at, to) === CLOSE_ARRAY) return at + 1;
    if (byteAt(bytes, at, to) !== COMMA) throw GIVE_UP;
    at = skipSpace(bytes, at + 1, to);
  }
}

/** 0x and `digits` hex digits from `start` to `end` (the first `zeros` of them 0): 1 all lower case, 2 some upper case; gives up otherwise. */
function hexText(bytes: Buffer, start: number, end: number, digits: number, zeros = 0): number {
  if (end - start !== digits + 2 || bytes[start] !== ZERO || bytes[start + 1] !== LOWER_X) throw GIVE_UP;
  for (let i = start + 2; i < start + 2 + zeros; i++) if (bytes[i] !== ZERO) throw GIVE_UP;
  let kind = 1;
  for (let i = start + 2 + zeros; i < end; i++) {
    const k = HEX_CODES[bytes[i]!]!;
    if (k === 0) throw GIVE_UP;
    kind |= k;
  }
  return kind === 1 ? 1 : 2;
}

/** Whether the 66 bytes at `start` are a topic of 12 zero bytes, then 20 bytes (`isAddressTopic`). */
function isAddressTopicAt(bytes: Buffer, start: number): boolean {
  for (let i = start + 2; i < start + 26; i++) if (bytes[i] !== ZERO) return false;
  return true;
}

/** A minimal hex quantity up to 2^53−1 (`quantity` of transfer-log.ts); gives up otherwise. */
function quantityAt(bytes: Buffer, start: number, end: number): number {
  const digits = end - start - 2;
  if (digits < 1 || digits > 14 || bytes[start] !== ZERO || bytes[start + 1] !== LOWER_X) throw GIVE_UP;
  if (digits > 1 && bytes[start + 2] === ZERO) throw GIVE_UP;
  let n = 0;
  for (let i = start + 2; i < end; i++) {
    const b = bytes[i]!;
    if (HEX_CODES[b] === 0) throw GIVE_UP;
    n = n * 16 + hexDigitValue(b);
  }
  if (!Number.isSafeInteger(n)) throw GIVE_UP;
  return n;
}

function text(bytes: Buffer, start: number, end: number, kind: number): string {
  const s = bytes.toString('latin1', start, end);
  return kind === 1 ? s : s.toLowerCase();
}

/** Where a string field's text starts (its end: `fields.ends`); gives up when the field holds a literal. */
function stringStart(fields: Fields, i: number): number {
  if (fields.ends[i]! < 0) throw GIVE_UP;
  return fields.starts[i]!;
}

/** A quantity field's value (`quantityAt`). */
function quantityField(bytes: Buffer, fields: Fields, bit: number): number {
  const i = slot(bit);
  return quantityAt(bytes, stringStart(fields, i), fields.ends[i]!);
}

/** A hash or address field's text, lower case (`hexText`). */
function hexField(bytes: Buffer, fields: Fields, bit: number, digits: number): string {
  const i = slot(bit);
  const start = stringStart(fields, i);
  const end = fields.ends[i]!;
  return text(bytes, start, end, hexText(bytes, start, end, digits));
}

/** The log `fields` holds, as `readTransferLog` reads it; gives up where it would find a problem. */
function reading(bytes: Buffer, fields: Fields, shared: { hashAt: number; hash: string }, scratch: Buffer): LogReading {
  if ((fields.seen & REQUIRED) !== REQUIRED) throw GIVE_UP;
  const contract = hexField(bytes, fields, ADDRESS, 40);
  const blockNumber = quantityField(bytes, fields, BLOCK_NUMBER);
  const logIndex = quantityField(bytes, fields, LOG_INDEX);
  const transactionIndex = quantityField(bytes, fields, TRANSACTION_INDEX);
  const hashSlot = slot(BLOCK_HASH);
  const hashStart = stringStart(fields, hashSlot);
  const hashEnd = fields.ends[hashSlot]!;
  const hashKind = hexText(bytes, hashStart, hashEnd, 64);
  let blockHash: string;
  if (shared.hashAt >= 0 && sameBytes(bytes, shared.hashAt, hashStart, 66)) blockHash = shared.hash;
  else {
    blockHash = text(bytes, hashStart, hashEnd, hashKind);
    shared.hashAt = hashStart;
    shared.hash = blockHash;
  }
  const transactionHash = hexField(bytes, fields, TRANSACTION_HASH, 64);
  let removed = false;
  if (fields.seen & REMOVED) {
    const code = fields.ends[slot(REMOVED)]!;
    if (code !== -2 && code !== -3) throw GIVE_UP;
    removed = code === -2;
  }
  let logTimestamp: number | undefined;
  if (fields.seen & BLOCK_TIMESTAMP) {
    const i = slot(BLOCK_TIMESTAMP);
    const end = fields.ends[i]!;
    if (end >= 0) logTimestamp = quantityAt(bytes, fields.starts[i]!, end);
    else if (end !== -1) throw GIVE_UP;
  }
  const dataSlot = slot(DATA);
  const dataStart = stringStart(fields, dataSlot);
  const dataEnd = fields.ends[dataSlot]!;
  const dataLength = dataEnd - dataStart;
  if (dataLength % 2 !== 0 || (dataLength - 2) % 64 !== 0) throw GIVE_UP;
  hexText(bytes, dataStart, dataEnd, dataLength - 2);
  const topics = fields.topicCount;
  if (topics === 0) throw GIVE_UP;
  const topic0 = fields.topicStarts[0]!;
  // the Transfer topic, in either case (`readTransferLog` compares it lower-cased)
  if (hexText(bytes, topic0, topic0 + 66, 64) === 1 ? !holds(bytes, topic0, topic0 + 66, TRANSFER) : !sameLowered(bytes, topic0)) throw GIVE_UP;
  let addressTopics = 0;
  for (let t = 1; t < topics; t++) {
    const start = fields.topicStarts[t]!;
    hexText(bytes, start, start + 66, 64);
    if (t <= 2 && isAddressTopicAt(bytes, start)) addressTopics++;
  }
  if (!removed && topics === 3 && dataLength === 66) {
    if (addressTopics < 2) throw GIVE_UP;
    return {
      kind: 'transfer',
      transfer: {
        contractAddress: contract,
        fromAddress: topicAddress(bytes, fields.topicStarts[1]!, scratch),
        toAddress: topicAddress(bytes, fields.topicStarts[2]!, scratch),
        value: uint256Text(bytes, dataStart, dataEnd),
        blockHash,
        blockNumber,
        blockTimestamp: '',
        transactionHash,
        transactionIndex,
        logIndex,
      },
      logTimestamp,
    };
  }
  if (removed) return { kind: 'removed', contract, blockNumber, blockHash, transactionHash, logIndex };
  return { kind: 'skipped', skipped: topics === 4 ? 'erc721' : 'other', contract, blockNumber, blockHash, transactionHash, logIndex };
}

/** Whether the `length` bytes at `a` and at `b` are the same. */
function sameBytes(bytes: Buffer, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}

/** Hex digits a number holds exactly (2^53 > 16^13). */
const NUMBER_DIGITS = 13;

/**
 * The decimal text of a word of data (0x and 64 hex digits, checked), as `BigInt(data).toString()` gives it: through a
 * number when it has at most 13 significant digits (a BigInt and its text are made only for larger ones).
 */
function uint256Text(bytes: Buffer, start: number, end: number): string {
  let first = start + 2;
  while (first < end && bytes[first] === ZERO) first++;
  if (end - first > NUMBER_DIGITS) return BigInt(bytes.toString('latin1', start, end)).toString();
  let n = 0;
  for (let i = first; i < end; i++) {
    const b = bytes[i]!;
    n = n * 16 + hexDigitValue(b);
  }
  return String(n);
}

/** Whether the topic at `start` is the Transfer topic once lower-cased. */
function sameLowered(bytes: Buffer, start: number): boolean {
  for (let i = 0; i < 66; i++) if ((bytes[start + i]! | (HEX_CODES[bytes[start + i]!] === 2 ? 0x20 : 0)) !== TRANSFER[i]) return false;
  return true;
}

/** The address of an address topic, lower case, as one flat string (written into `scratch` first). */
function topicAddress(bytes: Buffer, start: number, scratch: Buffer): string {
  scratch[0] = ZERO;
  scratch[1] = LOWER_X;
  for (let i = 0; i < 40; i++) {
    const b = bytes[start + 26 + i]!;
    scratch[2 + i] = HEX_CODES[b] === 2 ? b | 0x20 : b;
  }
  return scratch.toString('latin1', 0, 42);
}
