import type { z } from 'zod';

/**
 * Turns zod issues into one line each, naming the field (or flag), what was expected and what was got.
 *
 * @example formatIssues(err.issues, { name: (path) => `--${path[0]}` }) // → ['--blocks: expected …, got "-3"']
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[], input: unknown, name: (path: readonly PropertyKey[]) => string): string[] {
  return issues.map((issue) => {
    const got = valueAt(input, issue.path);
    const shown = got === undefined ? 'nothing' : JSON.stringify(got);
    return `${name(issue.path)}: ${issue.message}, got ${shown}`;
  });
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}
