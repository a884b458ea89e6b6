import { describe, expect, it } from 'vitest';
import { createFirstAnswerGate } from './first-answer.ts';

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
    // b's is answered: c goes, and so does any later query, without waiting
    gate.answered();
    await tick();
    expect(went).toEqual(['a', 'b', 'c']);
    (await b)();
    (await c)();
    await gate.turn();
    went.push('d');
    expect(went).toEqual(['a', 'b', 'c', 'd']);
  });
});
