import { randomBytes } from 'node:crypto';
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, closingQuote, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE, readResultElements, type ElementReader } from './json-body.ts';
import { jsonText } from './json-text.ts';

/**
 * A JSON-RPC answer read as its bytes come: each element of its `result` array is parsed and given to the reader
 * while the rest of the body is still on its way, and the bytes read are let go. An `eth_getLogs` answer of 10,000
 * logs is 6–7 MB; four in flight, each held whole until its last byte came, were 35–43 MB of a node run's peak RSS.
 *
 * Only a body that starts as a JSON-RPC answer does (`{"jsonrpc":"2.0","id":1,"result":[`, keys `jsonrpc` and `id`
 * before `result`, in any order and spacing): any other body (an error, a batch, a `result` that is not an array, or
 * one whose head runs past `HEAD_BYTES`) is kept whole and handed back for `parseJsonBody`, as every body was before.
 */

/** The bytes in which a JSON-RPC answer's head must reach its `result` array to be read as it comes. */
const HEAD_BYTES = 256;
/** `{`, then `"jsonrpc"` and `"id"` with plain values, then `"result":[`. */
const RESULT_HEAD = /^\s*\{\s*(?:"(?:jsonrpc|id)"\s*:\s*(?:"[^"\\]*"|-?\d+|null)\s*,\s*)*"result"\s*:\s*\[/;
/** Elements parsed at once: about as many bytes as `parseJsonBody`'s groups (a string of 128 KB is a large object to V8). */
const GROUP_BYTES = 32 * 1024;
/** Bytes scanned per step: a socket's chunk may be larger than a group. */
const PIECE_BYTES = 64 * 1024;

/** A body read as it came that is not JSON; the message says where. */
export class StreamedJsonError extends Error {
  override readonly name = 'StreamedJsonError';
}

/** What a body read to its end gives: the parsed answer, or (a body that is not a JSON-RPC answer) its bytes, unparsed. */
export type StreamEnd = { value: unknown } | { pieces: Buffer[] };

export interface ResultStream {
  /** The body's next bytes. Throws `StreamedJsonError` as soon as they cannot be JSON. */
  push(chunk: Buffer): void;
  /** The body's end: what `parseJsonBody` of all its bytes with the same reader gives, or its bytes to parse that way. */
  end(): StreamEnd;
  /** The start of the body, for an error's message. */
  start(): string;
}

/**
 * @example
 * const stream = createResultStream((log, i) => readLogElement(log, i));
 * for await (const chunk of body) stream.push(chunk);
 * stream.end(); // → { value: { jsonrpc: '2.0', id: 1, result: [<read log 0>, <read log 1>, …] } }
 */
export function createResultStream(reader: ElementReader): ResultStream {
  let mode: 'head' | 'result' | 'tail' | 'whole' = 'head';
  // head: the bytes until it is known whether the body is an answer to read as it comes (or, whole, all of them)
  let kept: Buffer[] = [];
  let keptBytes = 0;
  // the body before its `result` array's bracket
  let before = Buffer.alloc(0);
  let startText = '';
  const out: unknown[] = [];
  // result: the bytes since the current group's first element, in pieces, and the body's offset of that element
  let group: Buffer[] = [];
  let groupBytes = 0;
  let groupAt = 0;
  // a group's bytes in brackets, copied together so that its text is made once: text made of its pieces' texts and
  // two brackets was made twice (each piece's, then the join), and the second copy of every answer's bytes made
  // the young generation fill about a tenth more often (793–826 scavenges of a node run against 727–731)
  let scratch = Buffer.allocUnsafeSlow(2 * GROUP_BYTES);
  // commas between the result's elements in the group; the last one's place (its piece, its offset in it, its offset in
  // the group; −1: none since the group began) and how many came up to it. Numbers, not an object made per element.
  let commas = 0;
  let cutPiece = 0;
  let cutAt = 0;
  let cutBytes = -1;
  let cutCommas = 0;
  // brackets open inside the result's elements; whether a string is open, and the backslashes that end what came of it
  const kinds: number[] = [];
  let depth = 0;
  let inString = false;
  let slashes = 0;

  const fail = (message: string): never => {
    throw new StreamedJsonError(message);
  };

  /** Reads the elements of `pieces` (the text between two commas, or a comma and a bracket), `count` of them. */
  function readGroup(pieces: Buffer[], count: number): void {
    let size = 2;
    for (const p of pieces) size += p.length;
    if (size > scratch.length) scratch = Buffer.allocUnsafeSlow(Math.max(size, 2 * scratch.length));
    scratch[0] = OPEN_ARRAY;
    let at = 1;
    for (const p of pieces) at += p.copy(scratch, at);
    scratch[at] = CLOSE_ARRAY;
    // a reader that reads the bytes themselves needs neither their text nor JSON.parse's objects
    const direct = reader.fromBytes?.(scratch, 1, size - 1, count, out.length);
    if (direct !== undefined) {
      for (let k = 0; k < count; k++) out.push(direct[k]);
      return;
    }
    let values: unknown;
    try {
      values = JSON.parse(jsonText([scratch.subarray(0, size)]));
    } catch (err) {
      fail(`${(err as Error).message}, in the result's elements from byte ${groupAt}`);
    }
    if (!Array.isArray(values) || values.length !== count) fail(`an element missing between the commas of the result, from byte ${groupAt}`);
    for (const v of values as unknown[]) out.push(reader(v, out.length));
  }

  /** Reads the group's elements up to its last comma; the bytes after it start the next group. */
  function readToLastComma(): void {
    const pieces = group.slice(0, cutPiece);
    pieces.push(group[cutPiece]!.subarray(0, cutAt));
    readGroup(pieces, cutCommas);
    group = [group[cutPiece]!.subarray(cutAt + 1), ...group.slice(cutPiece + 1)];
    groupBytes -= cutBytes + 1;
    groupAt += cutBytes + 1;
    commas -= cutCommas;
    cutBytes = -1;
  }

  /** Scans `piece` (the group's last) for the result's commas and its closing bracket; the offset of that bracket, or −1. */
  function scan(piece: Buffer, index: number, offset: number): number {
    let i = 0;
    if (inString) {
      const q = closingQuote(piece, 0, slashes);
      if (q < 0) {
        slashes = trailingSlashes(piece, slashes);
        return -1;
      }
      inString = false;
      i = q + 1;
    }
    for (; i < piece.length; i++) {
      const b = piece[i]!;
      if (b === QUOTE) {
        const q = closingQuote(piece, i + 1, 0);
        if (q < 0) {
          inString = true;
          slashes = trailingSlashes(piece, 0);
          return -1;
        }
        i = q;
      } else if (b === COMMA) {
        if (depth === 0) {
          cutPiece = index;
          cutAt = i;
          cutBytes = offset + i;
          cutCommas = ++commas;
        }
      } else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
        kinds[depth++] = b;
      } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
        if (depth === 0) {
          if (b === CLOSE_ARRAY) return i;
          fail(`a '}' closes the result's array, at byte ${groupAt + offset + i}`);
        }
        depth--;
        if ((b === CLOSE_ARRAY) !== (kinds[depth] === OPEN_ARRAY)) fail(`a '${String.fromCharCode(b)}' closes a bracket of the other kind, at byte ${groupAt + offset + i}`);
      }
    }
    return -1;
  }

  function pushResult(bytes: Buffer): void {
    for (let from = 0; from < bytes.length && mode === 'result'; from += PIECE_BYTES) {
      const piece = bytes.subarray(from, from + PIECE_BYTES);
      group.push(piece);
      const close = scan(piece, group.length - 1, groupBytes);
      if (close < 0) {
        groupBytes += piece.length;
        if (cutBytes >= GROUP_BYTES) readToLastComma();
        continue;
      }
      // the result's end: its last elements, then the rest of the body
      group[group.length - 1] = piece.subarray(0, close);
      const pieces = group;
      const empty = out.length === 0 && commas === 0 && pieces.every((p) => p.every(isSpace));
      if (!empty) readGroup(pieces, commas + 1);
      group = [];
      mode = 'tail';
      kept = [bytes.subarray(from + close + 1)];
    }
  }

  /** The head is all here, or the body ended: read the result as it comes, or keep the body whole. */
  function decide(): void {
    const head = kept.length === 1 ? kept[0]! : Buffer.concat(kept, keptBytes);
    const match = RESULT_HEAD.exec(head.toString('latin1', 0, HEAD_BYTES));
    if (!match) {
      mode = 'whole';
      return;
    }
    const opened = match[0].length;
    startText = head.toString('utf8', 0, Math.min(head.length, 200));
    before = Buffer.from(head.subarray(0, opened - 1));
    kept = [];
    keptBytes = 0;
    mode = 'result';
    groupAt = opened;
    pushResult(head.subarray(opened));
  }

  return {
    push(chunk) {
      if (mode === 'result') return pushResult(chunk);
      kept.push(chunk);
      keptBytes += chunk.length;
      if (mode === 'head' && keptBytes >= HEAD_BYTES) decide();
    },
    end() {
      if (mode === 'head') decide();
      if (mode === 'whole') return { pieces: kept };
      if (mode === 'result') fail(`Unexpected end of JSON input: the body ended inside the result's array, after byte ${groupAt + groupBytes}`);
      // the rest of the body, with a marker no body can hold in the result's place
      const marker = `\u0000result:${randomBytes(12).toString('hex')}`;
      let value: unknown;
      try {
        value = JSON.parse(jsonText([before, Buffer.from(JSON.stringify(marker)), ...kept]));
      } catch (err) {
        fail(`${(err as Error).message}, in the body around its result's array`);
      }
      const answer = value as { result?: unknown };
      if (answer.result === marker) answer.result = out;
      // `result` given twice: its last value, as JSON.parse gives it, read as `parseJsonBody` reads it
      else readResultElements(value, reader);
      return { value };
    },
    start() {
      return startText || Buffer.concat(kept).toString('utf8', 0, 200);
    },
  };
}

/** The backslashes that end `bytes` (inside a string), counting `carried` ones before it when all of it is backslashes. */
function trailingSlashes(bytes: Buffer, carried: number): number {
  let t = 0;
  while (t < bytes.length && bytes[bytes.length - 1 - t] === BACKSLASH) t++;
  return t === bytes.length ? carried + t : t;
}

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}
