/**
 * Problems in configuration, one line each, naming the field (or flag), what was expected and what was got:
 * `contracts[1].fromBlock: expected an integer ≥ 0, got -5`. The caller puts the file name in front.
 */
import { z } from 'zod';

export interface DescribeOptions {
  /** The schema the issues came from: lets an unknown key list the keys its object allows. */
  schema?: z.ZodType;
  /** How a path is named; `fieldPath` (`contracts[1].fromBlock`) by default, or a flag like `--from`. */
  name?: (path: readonly PropertyKey[]) => string;
}

/**
 * One line per problem, in the order zod found them, without repeats.
 *
 * @example describeIssues(jobSchema.safeParse(input).error.issues, input, { schema: jobSchema })
 * // → ['contracts[0].fromblock: unknown key (did you mean "fromBlock"?); expected one of address, fromBlock, toBlock',
 * //    'pageSize: expected an integer from 1 to 1000, got 0']
 */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  options: DescribeOptions = {},
): string[] {
  const name = options.name ?? fieldPath;
  const lines = issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const known = options.schema ? objectKeysAt(options.schema, issue.path) : undefined;
      return issue.keys.map((key) => line(name([...issue.path, key]), unknownKey(key, known)));
    }
    if (issue.code === 'custom') return [line(name(issue.path), issue.message)];
    const got = valueAt(input, issue.path);
    if (got === undefined) return [line(name(issue.path), `missing, ${issue.message}`)];
    const text = issue.code === 'invalid_type' && issue.expected !== 'string' && typeof got === 'string' ? ' (text: write numbers without quotes)' : '';
    return [line(name(issue.path), `${issue.message}, got ${shown(got)}${text}`)];
  });
  return [...new Set(lines)];
}

/**
 * Names a field the way it is written in JSON paths.
 *
 * @example fieldPath(['contracts', 1, 'fromBlock']) // → 'contracts[1].fromBlock'
 */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => {
      if (typeof key === 'number') return `[${key}]`;
      const text = String(key);
      if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(text)) return `[${JSON.stringify(text)}]`;
      return i === 0 ? text : `.${text}`;
    })
    .join('');
}

/** A value as the user wrote it, shortened when long. */
export function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function line(name: string, text: string): string {
  return name ? `${name}: ${text}` : text;
}

function unknownKey(key: string, known: readonly string[] | undefined): string {
  if (!known) return 'unknown key';
  const guess = closest(key, known);
  return `unknown key${guess ? ` (did you mean "${guess}"?)` : ''}; expected one of ${known.join(', ')}`;
}

/** The known key a typo most likely meant: same letters in another case, or one or two edits away. */
function closest(key: string, known: readonly string[]): string | undefined {
  const same = known.find((k) => k.toLowerCase() === key.toLowerCase());
  if (same) return same;
  let best: { key: string; distance: number } | undefined;
  for (const k of known) {
    const distance = editDistance(key.toLowerCase(), k.toLowerCase());
    if (distance <= Math.max(1, Math.min(2, Math.floor(k.length / 3))) && (!best || distance < best.distance)) best = { key: k, distance };
  }
  return best?.key;
}

/** Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i]!;
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The keys of the object schema at `path`, looking through arrays, optionals, defaults and transforms. */
function objectKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] | undefined {
  let s: z.ZodType | undefined = unwrap(schema);
  for (const key of path) {
    if (s instanceof z.ZodObject && typeof key === 'string') s = s.shape[key] as z.ZodType | undefined;
    else if (s instanceof z.ZodArray && typeof key === 'number') s = s.element as z.ZodType;
    else return undefined;
    if (s) s = unwrap(s);
  }
  return s instanceof z.ZodObject ? Object.keys(s.shape) : undefined;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    if (s instanceof z.ZodPipe) s = s.in as z.ZodType;
    else if (s instanceof z.ZodOptional || s instanceof z.ZodDefault || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
    else return s;
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/**
 * Where and why text is not JSON, for a message: `JSON.parse` does not always say where (Node 20 gives no
 * position for an unexpected token). Returns undefined when the text is valid JSON.
 *
 * @example jsonSyntaxProblem('{\n  "a": 1,\n}')
 * // → 'line 3, column 1: expected a property name in double quotes, got "}" (JSON allows no trailing comma)'
 */
export function jsonSyntaxProblem(text: string): string | undefined {
  const at = findJsonSyntaxError(text);
  if (!at) return undefined;
  const before = text.slice(0, at.offset);
  const line = before.split('\n').length;
  const column = at.offset - (before.lastIndexOf('\n') + 1) + 1;
  return `line ${line}, column ${column}: ${at.message}`;
}

const MAX_DEPTH = 512;

class SyntaxStop {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

/** A small JSON scanner (RFC 8259) that stops at the first error. */
function findJsonSyntaxError(text: string): SyntaxStop | undefined {
  let i = 0;
  const got = () => (i < text.length ? `got ${JSON.stringify(text[i])}` : 'got the end of the file');
  const fail = (expected: string, hint = ''): never => {
    throw new SyntaxStop(i, `${expected}, ${got()}${hint}`);
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const string = () => {
    i++;
    for (;;) {
      if (i >= text.length) fail('expected the closing " of a string');
      const c = text[i]!;
      if (c === '"') return void i++;
      if (c === '\\') {
        i++;
        if (text[i] === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) i += 5;
        else if (i < text.length && '"\\/bfnrt'.includes(text[i]!)) i++;
        else fail('expected an escape like \\n, \\" or \\u00e9 after \\');
      } else if (c.charCodeAt(0) < 0x20) fail('expected the closing " of a string', ' (a line break inside a string is written \\n)');
      else i++;
    }
  };
  const digits = (expected: string) => {
    if (!/[0-9]/.test(text[i] ?? '')) fail(expected);
    while (/[0-9]/.test(text[i] ?? '')) i++;
  };
  const number = () => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else digits('expected a digit');
    if (text[i] === '.') {
      i++;
      digits('expected a digit after the decimal point');
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      digits('expected a digit in the exponent');
    }
  };
  const value = (depth: number): void => {
    space();
    if (depth > MAX_DEPTH) fail(`expected at most ${MAX_DEPTH} levels of nesting`);
    const c = text[i];
    if (c === '{') return members(depth);
    if (c === '[') return elements(depth);
    if (c === '"') return string();
    if (c === '-' || /[0-9]/.test(c ?? '')) return number();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) return void (i += word.length);
    }
    if (c === '/') fail('expected a value', ' (JSON allows no comments)');
    if (c === "'") fail('expected a value', ' (JSON strings use double quotes)');
    fail('expected a value');
  };
  const members = (depth: number) => {
    i++;
    space();
    if (text[i] === '}') return void i++;
    for (;;) {
      space();
      if (text[i] !== '"') fail('expected a property name in double quotes', text[i] === '}' ? ' (JSON allows no trailing comma)' : '');
      string();
      space();
      if (text[i] !== ':') fail('expected ":" after the property name');
      i++;
      value(depth + 1);
      space();
      if (text[i] === ',') i++;
      else if (text[i] === '}') return void i++;
      else fail('expected "," or "}"');
    }
  };
  const elements = (depth: number) => {
    i++;
    space();
    if (text[i] === ']') return void i++;
    for (;;) {
      space();
      if (text[i] === ']') fail('expected a value', ' (JSON allows no trailing comma)');
      value(depth + 1);
      space();
      if (text[i] === ',') i++;
      else if (text[i] === ']') return void i++;
      else fail('expected "," or "]"');
    }
  };
  if (text.trim() === '') return new SyntaxStop(0, 'the file is empty, expected a JSON object');
  try {
    value(0);
    space();
    if (i < text.length) fail('expected the end of the file after the JSON value');
    return undefined;
  } catch (e) {
    if (e instanceof SyntaxStop) return e;
    throw e;
  }
}
