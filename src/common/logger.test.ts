import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, createTerminalLines } from './logger.ts';

describe('createTerminalLines', () => {
  it('sends lines to whoever diverted them, and to stderr again once given back', () => {
    const terminal = createTerminalLines();
    const above: string[] = [];
    terminal.divert((text) => above.push(text));
    terminal.write('one\n');
    terminal.write('two\n');
    expect(above).toEqual(['one\n', 'two\n']);
    terminal.divert(undefined);
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((text: string) => written.push(text) > 0) as typeof process.stderr.write;
    try {
      terminal.write('three\n');
    } finally {
      process.stderr.write = original;
    }
    expect(above).toHaveLength(2);
    expect(written).toEqual(['three\n']);
  });
});

describe('createLogger', () => {
  const before = process.env['LOG_FORMAT'];
  afterEach(() => {
    if (before === undefined) delete process.env['LOG_FORMAT'];
    else process.env['LOG_FORMAT'] = before;
  });

  it('writes readable lines through the terminal it is given, where progress bars can take them over', () => {
    process.env['LOG_FORMAT'] = 'pretty';
    const terminal = createTerminalLines();
    const lines: string[] = [];
    terminal.divert((text) => lines.push(text));
    createLogger({ terminal, name: 'test' }).info({ msg: 'page loaded', contract: '0xa0b8', rows: 100 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/INFO.*\(test\).*page loaded/);
    expect(lines[0]).toContain('contract: "0xa0b8"');
    expect(lines[0]).toContain('rows: 100');
    expect(() => JSON.parse(lines[0]!)).toThrow();
  });
});
