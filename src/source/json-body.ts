import { randomBytes } from 'node:crypto';
import { jsonText } from './json-text.ts';

/**
 * Bodies up to this size are parsed whole; in a larger one, each outermost array of more than this many bytes is
 * parsed in groups of elements of about this size. A string of 128 KB or more is a large object to V8, made in
 * memory of its own: a 421 KB page's text took 2.6 ms to make here, most of it page faults, where its parts cost a
 * fraction (`parseJsonBody`).
 */
const SPLIT_BYTES = 64 * 1024;

/** The bytes of JSON's structure (shared with `result-stream.ts`, which scans a body as it comes). */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;

/**
 * What each element of a JSON-RPC answer's `result` array becomes as it is parsed (`parseJsonBody`, or as the body
 * comes: `createResultStream`). It should not throw: `parseJsonBody` then throws too, and the HTTP client parses the
 * body again without it (the answer unread); read as the body comes, the call fails with what it threw.
 */
export type ElementReader = ((value: unknown, index: number) => unknown) & {
  /**
   * Reads `count` elements straight from their JSON bytes (`bytes[from, to)`: the elements and the commas between
   * them), each as the reader reads its parsed value, the first being element `index`: what the reader gives for
   * each, or undefined when it cannot (nothing read), and they are parsed and read one by one. Used as the body comes.
   */
  fromBytes?: (bytes: Buffer, from: number, to: number, count: number, index: number) => unknown[] | undefined;
};

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
 * With `readResult`, each element of the `result` array of a body that is a JSON object (a JSON-RPC answer) is
 * replaced by what `readResult` makes of it, in order from index 0. A large `result` is read group by group as it is
 * parsed: each group's parsed elements are garbage before the next group is parsed, where parsing it all first kept
 * every element of the answer alive at once (an `eth_getLogs` answer of 10,000 logs is about 10 MB of objects).
 * A body parsed more than once (a group that fails, then the whole) is read again from index 0.
 *
 * @example parseJsonBody([Buffer.from('{"rows":[1,2,3]}')]) // → { rows: [1, 2, 3] }
 * parseJsonBody([Buffer.from('{"id":1,"result":[1,2]}')], (v) => Number(v) * 10) // → { id: 1, result: [10, 20] }
 */
export function parseJsonBody(chunks: readonly Buffer[], readResult?: ElementReader): unknown {
  let size = 0;
  for (const c of chunks) size += c.length;
  if (size <= SPLIT_BYTES) return readResultElements(JSON.parse(jsonText(chunks)), readResult);
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  const arrays = bigArrays(bytes);
  if (arrays?.length) {
    const parsed = parseSplit(bytes, arrays, readResult);
    if (parsed.ok) return parsed.value;
  }
  return readResultElements(JSON.parse(jsonText(chunks)), readResult);
}

/**
 * A parsed body with each element of its `result` array (when it is an object with one) replaced by what `read`
 * makes of it, in place: what `parseJsonBody` gives with `read` for a body it parsed whole. For a client that
 * parses its bodies another way (a test's fake), so that it answers as `parseJsonBody` does.
 *
 * @example readResultElements({ id: 1, result: ['0x1'] }, (v) => Number(v)) // → { id: 1, result: [1] }
 */
export function readResultElements(value: unknown, read: ElementReader | undefined): unknown {
  if (!read || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const result = (value as { result?: unknown }).result;
  if (Array.isArray(result)) for (let i = 0; i < result.length; i++) result[i] = read(result[i], i);
  return value;
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
      i = closingQuote(bytes, i + 1, 0);
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

/**
 * The offset of the quote that closes a string, looking from `from` (just after its opening quote, or the start of
 * `bytes` when the string began in earlier bytes); `carried`: the backslashes that ended those earlier bytes. −1 when
 * no quote in `bytes` closes it.
 *
 * @example closingQuote(Buffer.from('"a\\"b"'), 1, 0) // → 5 (the escaped quote at 3 does not close it)
 */
export function closingQuote(bytes: Buffer, from: number, carried: number): number {
  let q = bytes.indexOf(QUOTE, from);
  while (q >= 0) {
    let s = 0;
    while (q - 1 - s >= 0 && bytes[q - 1 - s] === BACKSLASH) s++;
    if (q - s === 0) s += carried;
    if (s % 2 === 0) return q;
    q = bytes.indexOf(QUOTE, q + 1);
  }
  return -1;
}

function parseSplit(bytes: Buffer, arrays: readonly BigArray[], readResult: ElementReader | undefined): { ok: true; value: unknown } | { ok: false } {
  try {
    const marker = `\\u0000split:${randomBytes(12).toString('hex')}:`;
    const pieces: Buffer[] = [];
    let at = 0;
    for (const [n, a] of arrays.entries()) {
      pieces.push(bytes.subarray(at, a.start), Buffer.from(`"${marker}${n}"`));
      at = a.end + 1;
    }
    pieces.push(bytes.subarray(at));
    const prefix = `\u0000split:${marker.slice('\\u0000split:'.length)}`;
    // the rest of the body first, so that where each array goes (the answer's `result` or elsewhere) is known
    // before it is parsed; each array's place: the object that holds it and its key
    const places: { holder: Record<string, unknown>; key: string }[] = [];
    let placed = 0;
    const value: unknown = JSON.parse(jsonText(pieces), function (this: Record<string, unknown>, key: string, v: unknown) {
      if (typeof v === 'string' && v.startsWith(prefix)) {
        placed++;
        places[Number(v.slice(prefix.length))] = { holder: this, key };
      }
      return v;
    });
    if (placed !== arrays.length) return { ok: false };
    // the body is itself one large array (a batch): no `result` to read
    if (typeof value === 'string') return arrays.length === 1 ? { ok: true, value: parseArray(bytes, arrays[0]!, undefined) } : { ok: false };
    let resultRead = false;
    for (const [n, a] of arrays.entries()) {
      const { holder, key } = places[n]!;
      const isResult = holder === value && key === 'result';
      resultRead ||= isResult;
      holder[key] = parseArray(bytes, a, isResult ? readResult : undefined);
    }
    // a `result` small enough to be parsed with the rest of the body (another array made the body large)
    return { ok: true, value: resultRead ? value : readResultElements(value, readResult) };
  } catch {
    return { ok: false };
  }
}

/**
 * An array's elements, parsed a group of about `SPLIT_BYTES` at a time, each given to `read` (when given) as its group
 * is parsed. A group must hold one element more than the commas between them: a group of none (`, ,` or `,]` at its
 * edge, which `JSON.parse` of the group alone would take for an empty array) throws, as the whole body would.
 */
function parseArray(bytes: Buffer, a: BigArray, read: ElementReader | undefined): unknown[] {
  const out: unknown[] = [];
  // the group's elements run from `from` to just before the comma that ends them; `first`: the bound it began at
  let from = a.start + 1;
  let first = 0;
  const bounds = [...a.commas, a.end];
  for (let k = 0; k < bounds.length; k++) {
    const to = bounds[k]!;
    if (to - from < SPLIT_BYTES / 2 && k < bounds.length - 1) continue;
    const group = JSON.parse(groupText(bytes, from, to)) as unknown[];
    if (group.length !== k - first + 1) throw new SyntaxError(`an element missing between the commas of an array, at byte ${from}`);
    first = k + 1;
    if (read) for (const v of group) out.push(read(v, out.length));
    else for (const v of group) out.push(v);
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
