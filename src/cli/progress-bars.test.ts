import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createProgress } from './progress-bars.ts';

describe('createProgress', () => {
  it('on a terminal, loads the bars and sends the log lines above them while they are drawn, then back', async () => {
    const diverted: (((text: string) => void) | undefined)[] = [];
    const terminal = { write: () => undefined, divert: (to: ((text: string) => void) | undefined) => diverted.push(to) };
    const progress = await createProgress({ tty: true, logger: pino({ level: 'silent' }), job: 'j', terminal });
    expect(diverted).toHaveLength(1);
    expect(typeof diverted[0]).toBe('function');
    progress.start('0xa', 'token A', 100);
    progress.advance('0xa', 50, 1000);
    progress.stop();
    expect(diverted).toEqual([expect.any(Function), undefined]);
  });

  it('elsewhere, logs a line per contract when it stops, with its blocks and rows', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    let t = 0;
    const progress = await createProgress({ tty: false, logger, job: 'j', everyMs: 1000, now: () => t });
    progress.start('0xa', 'token A', 100);
    t = 500;
    progress.advance('0xa', 40, 400);
    expect(lines).toHaveLength(0);
    t = 1500;
    progress.advance('0xa', 60, 600);
    progress.stop();
    expect(lines.map((l) => [l.msg, l.blocks, l.rows])).toEqual([
      ['progress', 100, 1000],
      ['contract read', 100, 1000],
    ]);
  });
});
