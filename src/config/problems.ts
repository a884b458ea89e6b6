/**
 * Problems in configuration, one line each, naming the field (or flag), what was expected and what was got:
 * `contracts[1].fromBlock: expected an integer ≥ 0, got -5`. The caller puts the file name in front.
 */
import { visit } from 'jsonc-parser';
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
export function describeIssues(issues: readonly z.core.$ZodIssue[], input: unknown, options: DescribeOptions = {}): string[] {
  const name = options.name ?? fieldPath;
  const lines = issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const known = options.schema ? objectKeysAt(options.schema, issue.path) : undefined;
      return issue.keys.map((key) => line(name([...issue.path, key]), unknownKey(key, known)));
    }
    // a refinement's message names the values it is about, unless it asks for the value to be added (`params.got`)
    if (issue.code === 'custom' && issue.params?.['got'] !== true) return [line(name(issue.path), issue.message)];
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
 * Each key an object of valid JSON text holds twice: `JSON.parse` keeps the last silently, so a key written twice by
 * mistake would quietly lose its first value. One problem per repeated key, where it is repeated.
 *
 * @example duplicateKeys('{"name": "a",\n "name": "b"}')
 * // → ['line 2, column 2: "name" is given twice (line 1 too); JSON keeps only the last, so remove one']
 */
export function duplicateKeys(text: string): string[] {
  const problems: string[] = [];
  // each open object's keys, with the line each first appeared on
  const open: Map<string, number>[] = [];
  visit(text, {
    onObjectBegin: () => {
      open.push(new Map());
    },
    onObjectEnd: () => {
      open.pop();
    },
    onObjectProperty: (property, _offset, _length, line, column, path) => {
      const keys = open.at(-1);
      if (!keys) return;
      const first = keys.get(property);
      if (first === undefined) {
        keys.set(property, line);
        return;
      }
      const where = path().length ? ` in ${fieldPath(path())}` : '';
      problems.push(`line ${line + 1}, column ${column + 1}: ${JSON.stringify(property)} is given twice${where} (line ${first + 1} too); JSON keeps only the last, so remove one`);
    },
  });
  return problems;
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

/** What the parser wants next: a value (`element`: one after a comma in an array), a property name, its colon, or what follows a value. */
type Expecting = 'value' | 'element' | 'property' | 'colon' | 'after-value';

/**
 * A string token up to its first fault: the text ends, a backslash starts no escape, or a control character
 * (the characters allowed as they are: from the space on, but " and \).
 */
const STRING_PREFIX = /"(?:[\x20\x21\x23-\x5b\x5d-\uffff]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*/y;

/**
 * The first error in `text` as strict JSON (RFC 8259), found by jsonc-parser's `visit` (comments and trailing
 * commas refused) and stopped there. jsonc-parser says which token is wrong; what was expected comes from where
 * the parser was (tracked through the visitor), and a fault inside a string or number is placed on its character.
 */
function findJsonSyntaxError(text: string): SyntaxStop | undefined {
  if (text.trim() === '') return new SyntaxStop(0, 'the file is empty, expected a JSON object');
  const closers: ('}' | ']')[] = [];
  let expecting: Expecting = 'value';
  const stop = (offset: number, expected: string, hint = ''): never => {
    const got = offset < text.length ? `got ${JSON.stringify(text[offset])}` : 'got the end of the file';
    throw new SyntaxStop(offset, `${expected}, ${got}${hint}`);
  };
  const checkDepth = (offset: number) => {
    if (closers.length > MAX_DEPTH) stop(offset, `expected at most ${MAX_DEPTH} levels of nesting`);
  };
  // jsonc-parser calls onObjectEnd and onArrayEnd at the end of the file too, before saying it is not closed
  const close = (closer: '}' | ']') => (offset: number) => {
    if (text[offset] !== closer) return;
    closers.pop();
    expecting = 'after-value';
  };
  const unexpected = (offset: number): never => {
    const c = text[offset];
    switch (expecting) {
      case 'property':
        return stop(offset, 'expected a property name in double quotes', c === '}' ? ' (JSON allows no trailing comma)' : '');
      case 'colon':
        return stop(offset, 'expected ":" after the property name');
      case 'after-value':
        return stop(offset, closers.length ? `expected "," or "${closers.at(-1)}"` : 'expected the end of the file after the JSON value');
      default:
        if (expecting === 'element' && c === ']') stop(offset, 'expected a value', ' (JSON allows no trailing comma)');
        return stop(offset, 'expected a value', c === '/' ? ' (JSON allows no comments)' : c === "'" ? ' (JSON strings use double quotes)' : '');
    }
  };
  /** A string token jsonc-parser found fault with: where the fault is. */
  const badString = (offset: number): never => {
    STRING_PREFIX.lastIndex = offset;
    const at = offset + (STRING_PREFIX.exec(text)?.[0].length ?? 0);
    if (text[at] === '\\') stop(at + 1, 'expected an escape like \\n, \\" or \\u00e9 after \\');
    return stop(at, 'expected the closing " of a string', at < text.length ? ' (a line break inside a string is written \\n)' : '');
  };
  /** A number token jsonc-parser found fault with (or a lone minus): the digit it lacks. */
  const badNumber = (offset: number, length: number): never => {
    if (!/[0-9]/.test(text[offset + 1] ?? '') && text[offset] === '-') stop(offset + 1, 'expected a digit');
    const end = offset + length;
    return stop(end, text[end - 1] === '.' ? 'expected a digit after the decimal point' : 'expected a digit in the exponent');
  };
  try {
    visit(
      text,
      {
        onObjectBegin: (offset) => {
          checkDepth(offset);
          closers.push('}');
          expecting = 'property';
        },
        onArrayBegin: (offset) => {
          checkDepth(offset);
          closers.push(']');
          expecting = 'value';
        },
        onObjectEnd: close('}'),
        onArrayEnd: close(']'),
        onLiteralValue: (_value, offset) => {
          checkDepth(offset);
          expecting = 'after-value';
        },
        onObjectProperty: () => {
          expecting = 'colon';
        },
        onSeparator: (separator) => {
          expecting = separator === ':' ? 'value' : closers.at(-1) === '}' ? 'property' : 'element';
        },
        onError: (_error, offset, length) => {
          const c = text[offset] ?? '';
          const value = expecting === 'value' || expecting === 'element';
          if (value && !(expecting === 'element' && c === ']')) {
            checkDepth(offset);
            if (c === '"') badString(offset);
            if (c === '-' || /[0-9]/.test(c)) badNumber(offset, length);
            const keyword = /^(?:true|false|null)/.exec(text.slice(offset, offset + 5));
            if (keyword) {
              // a word that starts with a literal (`truex`): the literal is a value, what follows it is wrong
              expecting = 'after-value';
              unexpected(offset + keyword[0].length);
            }
          }
          if (expecting === 'property' && c === '"') badString(offset);
          unexpected(offset);
        },
      },
      { disallowComments: true, allowTrailingComma: false },
    );
    return undefined;
  } catch (e) {
    if (e instanceof SyntaxStop) return e;
    throw e;
  }
}
