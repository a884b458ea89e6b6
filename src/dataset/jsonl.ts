import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

/** Reads a JSON-lines file one parsed object at a time, with its 1-based line number. Blank lines are skipped. */
export async function* readJsonl(path: string): AsyncGenerator<{ line: number; value: unknown }> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let line = 0;
  for await (const text of lines) {
    line++;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new Error(`${path} line ${line}: not valid JSON (${(err as Error).message})`);
    }
    yield { line, value };
  }
}
