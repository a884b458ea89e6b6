import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TransferRecord } from '../dataset/types.ts';
import { LogsAnswer } from './logs-answer.ts';
import { transfersJsonSize, writeTransfersJson } from './transfers-json.ts';

const MAX_REQUEST_BODY = 5 * 1024 * 1024;

/** Reads a request body as text, refusing bodies over `limit` bytes. */
export async function readBody(req: IncomingMessage, limit = MAX_REQUEST_BODY): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export type Cut = 'reset' | 'truncated' | undefined;

/**
 * Memory for the bodies of pages, used again once a body is sent: a page's 420 KB in a buffer made anew is a fresh
 * mapping each time, and on a virtual machine its every page fault costs more than writing the text into it.
 */
export interface SendBuffers {
  /** A buffer of `size` bytes, in memory an earlier body used when one is free. */
  take(size: number): Buffer;
  /** The body `take` gave is sent: its memory may be used again. */
  give(bytes: Buffer): void;
}

/**
 * Keeps up to `keep` freed buffers (each rounded up to 64 KB, so pages of about one size fit any of them).
 *
 * @example const buffers = createSendBuffers(); const b = buffers.take(421_000); …; buffers.give(b);
 */
export function createSendBuffers(keep = 8): SendBuffers {
  const free: ArrayBuffer[] = [];
  return {
    take(size) {
      // the smallest that fits: a header batch's 100 KB does not take the memory of a 6 MB eth_getLogs answer
      let i = -1;
      for (let k = 0; k < free.length; k++) if (free[k]!.byteLength >= size && (i < 0 || free[k]!.byteLength < free[i]!.byteLength)) i = k;
      const memory = i >= 0 ? free.splice(i, 1)[0]! : new ArrayBuffer(Math.ceil(Math.max(size, 1) / 65_536) * 65_536);
      return Buffer.from(memory, 0, size);
    },
    give(bytes) {
      if (free.length < keep) free.push(bytes.buffer as ArrayBuffer);
    },
  };
}

/**
 * A page's bytes: its head as UTF-8 (the token's name may be any text), its rows as JSON (`writeTransfersJson`), and
 * the closing `}`, written straight into one buffer. The same bytes as the UTF-8 of the page's whole text, without
 * making that text.
 *
 * @example pageBytes({ head: '{"contractName":"Éther","tokenTransfers":', rows: [] }, buffers).toString() // → '{"contractName":"Éther","tokenTransfers":[]}'
 */
export function pageBytes(page: { head: string; rows: readonly TransferRecord[] }, buffers: SendBuffers): Buffer {
  const headSize = Buffer.byteLength(page.head, 'utf8');
  const bytes = buffers.take(headSize + transfersJsonSize(page.rows) + 1);
  const at = writeTransfersJson(page.rows, bytes, bytes.write(page.head, 0, 'utf8'));
  // memory used before holds an earlier answer's bytes: a size that disagreed with the writer would send some of them
  if (at !== bytes.length - 1) throw new Error(`a page of ${page.rows.length} rows measured ${bytes.length} bytes but wrote ${at + 1}`);
  bytes[at] = 0x7d; // }
  return bytes;
}

/** Elements of a large array turned into text at a time: about 45 KB of logs, a string V8 keeps among its young objects. */
const GROUP = 64;

/**
 * A JSON value's UTF-8 bytes, written into memory `buffers` gives: a JSON-RPC answer of 10,000 logs is about 6 MB,
 * and `Buffer.from` of its text (a buffer made anew) took about ten times as long as writing it into memory used before.
 * A large array (a batch's answers, or an answer's `result`) is turned into text `GROUP` elements at a time, each
 * written before the next is made: the text of the whole answer would be a string of 6 MB, made in memory of its own
 * (a fresh mapping, every page of it a page fault) for each answer. An `eth_getLogs` result (`LogsAnswer`) writes its
 * own bytes, in an answer alone or in a batch of any size, unless the answer is not a plain object or it or a member
 * of its batch has a `toJSON` (then JSON.stringify writes the whole, as it would).
 *
 * @example jsonBytes({ id: 1, result: '0x1' }, buffers).toString() // → '{"id":1,"result":"0x1"}'
 */
export function jsonBytes(value: unknown, buffers: SendBuffers): Buffer {
  const out = bodyWriter(buffers, sizeHint(value));
  writeJson(value, out, true);
  return out.done();
}

/** Writes `value`'s JSON text; `outer`: it may be a batch, or an answer whose `result` is large. */
function writeJson(value: unknown, out: BodyWriter, outer: boolean): void {
  const batch = outer ? batchOf(value) : undefined;
  if (batch) {
    writeArray(batch, out, true);
    return;
  }
  const result = outer ? largeResult(value) : undefined;
  if (!result) {
    // an answer a batch leaves out (none is) would be `null` in the batch's text, as JSON.stringify writes it
    out.write(JSON.stringify(value) ?? 'null');
    return;
  }
  // the answer's text with a marker in its `result`'s place (random: no other value of the answer holds it), then
  // the text before the marker, the array, the text after it
  const marker = `"~result:${randomBytes(12).toString('hex')}"`;
  const text = JSON.stringify({ ...(value as Record<string, unknown>), result: marker.slice(1, -1) });
  const at = text.indexOf(marker);
  out.write(text.slice(0, at));
  if (result instanceof LogsAnswer) out.writeBytes(result.jsonBound(), (bytes, from) => result.writeJson(bytes, from));
  else writeArray(result, out, false);
  out.write(text.slice(at + marker.length));
}

/** An array's text, `GROUP` elements at a time; a batch's answers each as an answer (one may carry a large `result`). */
function writeArray(items: readonly unknown[], out: BodyWriter, batch: boolean): void {
  out.write('[');
  for (let from = 0; from < items.length; from += GROUP) {
    const group = items.slice(from, from + GROUP);
    if (batch) {
      for (const [k, item] of group.entries()) {
        if (from + k > 0) out.write(',');
        writeJson(item, out, true);
      }
    } else {
      if (from > 0) out.write(',');
      out.write(groupText(group));
    }
  }
  out.write(']');
}

/** The elements' JSON text, comma-separated, without the array's brackets. */
function groupText(group: readonly unknown[]): string {
  return JSON.stringify(group).slice(1, -1);
}

/**
 * About the size of `value`'s text: from the first group of a large `result` (a little over is better than under);
 * anything else starts at 64 KB and grows (a batch's first answers may be large ones, not worth making twice; an
 * `eth_getLogs` result measures itself once, when it is written: `writeBytes`).
 */
function sizeHint(value: unknown): number {
  const result = largeResult(value);
  if (!result || result instanceof LogsAnswer) return 64 * 1024;
  const first = groupText(result.slice(0, GROUP)).length + 2;
  return Math.ceil((first * result.length * 1.1) / GROUP) + 64 * 1024;
}

/**
 * The arrays written a group at a time: plain data as an answer is made (JSON.stringify of the whole gives the same
 * text). A value of another kind (one with `toJSON`, a class's instance, an inherited `result`) is written whole, and
 * so is an array with an element that has `toJSON` (JSON.stringify hands it its index in the whole array as its key).
 */
function largeArray(value: unknown): unknown[] | undefined {
  return Array.isArray(value) && value.length > GROUP && !hasToJson(value) && !value.some(hasToJson) ? value : undefined;
}

function hasToJson(value: unknown): boolean {
  return value !== null && typeof value === 'object' && 'toJSON' in value;
}

/** A batch written an answer at a time: one of more than `GROUP` answers, or one holding an `eth_getLogs` result. */
function batchOf(value: unknown): unknown[] | undefined {
  if (!Array.isArray(value) || value.length > GROUP) return largeArray(value);
  return !hasToJson(value) && !value.some(hasToJson) && value.some((answer) => largeResult(answer) instanceof LogsAnswer) ? value : undefined;
}

function largeResult(value: unknown): unknown[] | LogsAnswer | undefined {
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype || !Object.hasOwn(value, 'result')) return undefined;
  if (hasToJson(value)) return undefined;
  if (!Object.prototype.propertyIsEnumerable.call(value, 'result')) return undefined;
  const result = (value as { result: unknown }).result;
  return result instanceof LogsAnswer ? result : largeArray(result);
}

interface BodyWriter {
  write(text: string): void;
  /** Lets `write` put at most `bound` bytes straight into the memory, from where the text has got to. */
  writeBytes(bound: number, write: (bytes: Buffer, at: number) => number): void;
  /** The bytes written, in memory `buffers` gave (to be given back once sent). */
  done(): Buffer;
}

/** Text written as UTF-8 into memory from `buffers` (`size` to begin with), moved to larger memory if it runs out. */
function bodyWriter(buffers: SendBuffers, size: number): BodyWriter {
  let bytes = buffers.take(size);
  let at = 0;
  /** Moves the text to larger memory unless `need` more bytes fit. */
  const room = (need: number) => {
    if (at + need <= bytes.length) return;
    const larger = buffers.take(Math.max(2 * bytes.length, at + need));
    bytes.copy(larger, 0, 0, at);
    buffers.give(bytes);
    bytes = larger;
  };
  return {
    write(text) {
      // a UTF-16 unit is at most 3 bytes of UTF-8; its exact length is counted only when that might not fit
      if (at + 3 * text.length > bytes.length) room(Buffer.byteLength(text, 'utf8'));
      at += bytes.write(text, at, 'utf8');
    },
    writeBytes(bound, write) {
      room(bound);
      const end = write(bytes, at);
      // a write past its bound would have lost bytes at the memory's end without a word
      if (end > at + bound) throw new Error(`wrote ${end - at} bytes where at most ${bound} were measured`);
      at = end;
    },
    done: () => bytes.subarray(0, at),
  };
}

/**
 * Sends a JSON body (text, a value, or bytes already encoded). A `cut` response is damaged on purpose: `reset`
 * destroys the socket after part of the body; `truncated` ends a chunked response cleanly after part of it, so only
 * the JSON is broken. `sent` is called once the body is handed to the system (bytes may then be used again).
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: string | Buffer | unknown,
  headers: Record<string, string> = {},
  cut: Cut = undefined,
  sent?: () => void,
): void {
  // encoded once: its length and what is sent (a page's text is long, and may hold a two-byte token name)
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
  if (cut === 'truncated') {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(half(bytes), sent);
    return;
  }
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(bytes.length),
    ...headers,
  });
  if (cut === 'reset') {
    res.write(half(bytes), () => res.destroy());
    return;
  }
  res.end(bytes, sent);
}

function half(bytes: Buffer): Buffer {
  return bytes.subarray(0, Math.floor(bytes.length / 2));
}
