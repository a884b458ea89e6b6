import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeIssues, fieldPath, jsonSyntaxProblem, shown } from './problems.ts';

describe('fieldPath', () => {
  it('names nested fields as a JSON path', () => {
    expect(fieldPath(['contracts', 1, 'fromBlock'])).toBe('contracts[1].fromBlock');
    expect(fieldPath(['$schema'])).toBe('$schema');
    expect(fieldPath(['contracts', 0, 'from block'])).toBe('contracts[0]["from block"]');
    expect(fieldPath([])).toBe('');
  });
});

describe('shown', () => {
  it('shortens long values', () => {
    expect(shown('x'.repeat(100))).toHaveLength(58);
    expect(shown(-5)).toBe('-5');
  });
});

describe('describeIssues', () => {
  const schema = z.strictObject({ retries: z.number({ error: 'expected a number' }), endpoint: z.strictObject({ host: z.string() }).optional() }).transform((o) => o);

  it('suggests the key a typo meant only when one is close', () => {
    const input = { retires: 1, retries: 2, endpoint: { hots: 'a', port: 1 }, zzz: 0 };
    const issues = schema.safeParse(input).error!.issues;
    expect(describeIssues(issues, input, { schema })).toEqual([
      'endpoint.host: missing, Invalid input: expected string, received undefined',
      'endpoint.hots: unknown key (did you mean "host"?); expected one of host',
      'endpoint.port: unknown key; expected one of host',
      'retires: unknown key (did you mean "retries"?); expected one of retries, endpoint',
      'zzz: unknown key; expected one of retries, endpoint',
    ]);
  });

  it('names a path with the function it is given and says "unknown key" without a schema', () => {
    const input = { retries: 'x', extra: 1 };
    const issues = schema.safeParse(input).error!.issues;
    expect(describeIssues(issues, input, { name: (p) => `--${String(p[0])}` })).toEqual([
      '--retries: expected a number, got "x" (text: write numbers without quotes)',
      '--extra: unknown key',
    ]);
  });
});

describe('jsonSyntaxProblem', () => {
  const cases: [string, string][] = [
    ['{\n  "a": 1,\n}', 'line 3, column 1: expected a property name in double quotes, got "}" (JSON allows no trailing comma)'],
    ['[1, 2, ]', 'line 1, column 8: expected a value, got "]" (JSON allows no trailing comma)'],
    ['{\n  // a comment\n  "a": 1\n}', 'line 2, column 3: expected a property name in double quotes, got "/"'],
    ['{"a": // no\n 1}', 'line 1, column 7: expected a value, got "/" (JSON allows no comments)'],
    ["{'a': 1}", 'line 1, column 2: expected a property name in double quotes, got "\'"'],
    ['{"a": \'x\'}', 'line 1, column 7: expected a value, got "\'" (JSON strings use double quotes)'],
    ['{"a": "x\ny"}', 'line 1, column 9: expected the closing " of a string, got "\\n" (a line break inside a string is written \\n)'],
    ['{"a": "x', 'line 1, column 9: expected the closing " of a string, got the end of the file'],
    ['{"a": 01}', 'line 1, column 8: expected "," or "}", got "1"'],
    ['{"a": 1.}', 'line 1, column 9: expected a digit after the decimal point, got "}"'],
    ['{"a": tru}', 'line 1, column 7: expected a value, got "t"'],
    ['{"a": 1} {}', 'line 1, column 10: expected the end of the file after the JSON value, got "{"'],
    ['{"a" 1}', 'line 1, column 6: expected ":" after the property name, got "1"'],
    ['{"a": "\\x"}', 'line 1, column 9: expected an escape like \\n, \\" or \\u00e9 after \\, got "x"'],
    ['  \n', 'line 1, column 1: the file is empty, expected a JSON object'],
    ['\r\n{\r\n  "a": ,\r\n}', 'line 3, column 8: expected a value, got ","'],
  ];
  for (const [text, expected] of cases) {
    it(`locates the error in ${JSON.stringify(text)}`, () => {
      expect(() => JSON.parse(text)).toThrow(SyntaxError);
      expect(jsonSyntaxProblem(text)).toBe(expected);
    });
  }

  it('finds nothing wrong in valid JSON of every kind', () => {
    const text = JSON.stringify({ a: [1, -2.5e-3, 0, 'é\n"\\\u0001', true, false, null, {}, []], b: { c: 'x' } }, null, 2);
    expect(jsonSyntaxProblem(text)).toBeUndefined();
    expect(jsonSyntaxProblem(' 12 ')).toBeUndefined();
  });

  it('refuses nesting deeper than it checks, without overflowing the stack', () => {
    const deep = '['.repeat(100_000);
    expect(jsonSyntaxProblem(deep)).toMatch(/^line 1, column 514: expected at most 512 levels of nesting/);
  });

  it('agrees with JSON.parse on where the error is whenever Node says a position', () => {
    for (const text of ['{"a": 1,}', '{"a": 1 "b": 2}', '[1 2]', '{"a": "x\ty"}', '{"a": 1}x']) {
      const position = Number(
        /at position (\d+)/.exec(
          String(
            (() => {
              try {
                JSON.parse(text);
              } catch (e) {
                return (e as Error).message;
              }
            })(),
          ),
        )?.[1],
      );
      expect(position, text).not.toBeNaN();
      expect(jsonSyntaxProblem(text), text).toMatch(new RegExp(`^line 1, column ${position + 1}:`));
    }
  });
});
