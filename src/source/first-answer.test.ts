import { describe, expect, it } from 'vitest';
import { createFirstAnswerGate, SHORT_ANSWERS } from './first-answer.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('createFirstAnswerGate', () => {
  it('lets one query go at a time until one is answered, then all at once', async () => {
    const gate = createFirstAnswerGate();
    const went: string[] = [];
    const first = await gate.turn();
    went.push('a');
    const b = gate.turn().then((done) => {
      went.push('b');
      return done;
    });
    const c = gate.turn().then((done) => {
      went.push('c');
      return done;
    });
    await tick();
    expect(went).toEqual(['a']);
    // a's query failed: the next goes alone
    first();
    await tick();
    expect(went).toEqual(['a', 'b']);
    // b's is answered over its whole range: c goes, and so does any later query, without waiting
    gate.answered(true);
    await tick();
    expect(went).toEqual(['a', 'b', 'c']);
    (await b)();
    (await c)();
    await gate.turn();
    went.push('d');
    expect(went).toEqual(['a', 'b', 'c', 'd']);
  });

  it('keeps one query at a time after answers cut short by a chunk’s end, up to a number of them', async () => {
    const gate = createFirstAnswerGate();
    for (let i = 1; i < SHORT_ANSWERS; i++) {
      const done = await gate.turn();
      gate.answered(false);
      const next = gate.turn();
      // still held: the next waits for this turn to end
      expect(await Promise.race([next.then(() => 'went'), tick().then(() => 'waits')]), `short answer ${i}`).toBe('waits');
      done();
      (await next)();
    }
    const done = await gate.turn();
    gate.answered(false);
    // the last short answer opens it
    expect(await Promise.race([gate.turn().then(() => 'went'), tick().then(() => 'waits')])).toBe('went');
    done();
  });
});
