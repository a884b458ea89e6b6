import { randomBytes } from 'node:crypto';
import { jsonText } from './json-text.ts';

/**
 * Bodies up to this size are parsed whole; in a larger one, each outermost array of more than this many bytes is
 * parsed in groups of elements of about this size. A string of 128 KB or more is a large object to V8, made in
 * memory of its own: a 421 KB page's text took 2.6 ms to make here, most of it page faults, where its parts cost a
 * fraction (`parseJsonBody`).
 */
const SPLIT_BYTES = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** An array of the body to parse in groups: the offsets of its brackets and of the commas between its elements. */
interface BigArray {
  start: number;
  end: number;
  commas: number[];
}

/**
 * A UTF-8 JSON body, parsed: what `JSON.parse` of its text gives (through `jsonText`: one byte per character), without
 * making that text when the body is large. Its large arrays (a page's rows, an eth_getLogs answer's logs, a batch's
 * answers) are found by a scan of the bytes (strings skipped whole, so no bracket or comma in one is taken for
 * structure), each parsed in groups of elements of about 64 KB and joined, and the rest of the body parsed with a
 * marker in their place that a random key makes impossible to forge. A body the scan cannot follow, or any part that
 * does not parse, is parsed whole instead, so a malformed body fails as `JSON.parse` fails on it.
 *
 * @example parseJsonBody([Buffer.from('{"rows":[1,2,3]}')]) // → { rows: [1, 2, 3] }
 */
export function parseJsonBody(chunks: readonly Buffer[]): unknown {
  let size = 0;
  for (const c of chunks) size += c.length;
  if (size <= SPLIT_BYTES) return JSON.parse(jsonText(chunks));
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  const arrays = bigArrays(bytes);
  if (arrays?.length) {
    const parsed = parseSplit(bytes, arrays);
    if (parsed.ok) return parsed.value;
  }
  return JSON.parse(jsonText(chunks));
}

/**
 * The outermost arrays of more than `SPLIT_BYTES` bytes, in order; undefined when the bytes are not well-bracketed
 * JSON (an unclosed string or bracket, a bracket closed by the other kind). The open brackets and the commas of the
 * open arrays are kept in stacks made once per body, not in an object and an array per bracket: a node's answer has
 * two brackets and a dozen commas per log, and only the arrays' commas are ever used.
 */
function bigArrays(bytes: Buffer): BigArray[] | undefined {
  // per open bracket: its kind, its offset, and where its commas start in `commas`
  const kinds: number[] = [];
  const starts: number[] = [];
  const firstComma: number[] = [];
  let depth = 0;
  const commas: number[] = [];
  let commaCount = 0;
  const found: BigArray[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === QUOTE) {
      i = stringEnd(bytes, i);
      if (i < 0) return undefined;
    } else if (b === COMMA) {
      // an object's commas are never split at
      if (depth > 0 && kinds[depth - 1] === OPEN_ARRAY) commas[commaCount++] = i;
    } else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      kinds[depth] = b;
      starts[depth] = i;
      firstComma[depth] = commaCount;
      depth++;
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
      if (depth === 0) return undefined;
      depth--;
      const kind = kinds[depth]!;
      const start = starts[depth]!;
      if ((b === CLOSE_ARRAY) !== (kind === OPEN_ARRAY)) return undefined;
      const base = firstComma[depth]!;
      if (b === CLOSE_ARRAY && i - start > SPLIT_BYTES) {
        // an outer array holds the big arrays found inside it: it is split, they are parsed within its groups
        while (found.length && found.at(-1)!.start > start) found.pop();
        found.push({ start, end: i, commas: commas.slice(base, commaCount) });
      }
      commaCount = base;
    }
  }
  return depth ? undefined : found;
}

/** The offset of the quote that closes the string opened at `at`, or −1. */
function stringEnd(bytes: Buffer, at: number): number {
  let end = bytes.indexOf(QUOTE, at + 1);
  while (end > 0) {
    let slashes = 0;
    while (bytes[end - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end;
    end = bytes.indexOf(QUOTE, end + 1);
  }
  return -1;
}

function parseSplit(bytes: Buffer, arrays: readonly BigArray[]): { ok: true; value: unknown } | { ok: false } {
  try {
    const values = arrays.map((a) => parseArray(bytes, a));
    const marker = `\\u0000split:${randomBytes(12).toString('hex')}:`;
    const pieces: Buffer[] = [];
    let at = 0;
    for (const [n, a] of arrays.entries()) {
      pieces.push(bytes.subarray(at, a.start), Buffer.from(`"${marker}${n}"`));
      at = a.end + 1;
    }
    pieces.push(bytes.subarray(at));
    const prefix = `\u0000split:${marker.slice('\\u0000split:'.length)}`;
    let placed = 0;
    const value = JSON.parse(jsonText(pieces), (_key, v: unknown) => {
      if (typeof v !== 'string' || !v.startsWith(prefix)) return v;
      placed++;
      return values[Number(v.slice(prefix.length))];
    });
    return placed === arrays.length ? { ok: true, value } : { ok: false };
  } catch {
    return { ok: false };
  }
}

/** An array's elements, parsed a group of about `SPLIT_BYTES` at a time. */
function parseArray(bytes: Buffer, a: BigArray): unknown[] {
  const out: unknown[] = [];
  // the group's elements run from `from` to just before the comma that ends them
  let from = a.start + 1;
  const bounds = [...a.commas, a.end];
  for (let k = 0; k < bounds.length; k++) {
    const to = bounds[k]!;
    if (to - from < SPLIT_BYTES / 2 && k < bounds.length - 1) continue;
    const group = JSON.parse(groupText(bytes, from, to)) as unknown[];
    for (const v of group) out.push(v);
    from = to + 1;
  }
  return out;
}

/**
 * The text of the elements from `from` to just before `to`, in brackets: the bytes around them (the bracket or comma
 * before, the comma or bracket after) are made brackets while the text is made, then put back. A text joined from
 * the elements' and two brackets would be copied whole again for `JSON.parse` (it takes only flat strings).
 */
function groupText(bytes: Buffer, from: number, to: number): string {
  const before = bytes[from - 1]!;
  const after = bytes[to]!;
  bytes[from - 1] = OPEN_ARRAY;
  bytes[to] = CLOSE_ARRAY;
  try {
    return jsonText([bytes.subarray(from - 1, to + 1)]);
  } finally {
    bytes[from - 1] = before;
    bytes[to] = after;
  }
}
