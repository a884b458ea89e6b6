import { describe, expect, it } from 'vitest';
import { splitRange } from './chunks.ts';
import { planRun, type PlanInput } from './plan.ts';

const A = `0x${'aa'.repeat(20)}`;
const B = `0x${'bb'.repeat(20)}`;
const base: PlanInput = { contracts: [], head: 1000, finality: 64, chunks: 4, lastCovered: new Map() };

describe('splitRange', () => {
  it('covers the range exactly once, newest span first, in near-equal spans', () => {
    const spans = splitRange({ fromBlock: 0, toBlock: 9 }, 3);
    expect(spans).toEqual([
      { fromBlock: 6, toBlock: 9 },
      { fromBlock: 3, toBlock: 5 },
      { fromBlock: 0, toBlock: 2 },
    ]);
  });

  it('never makes more spans than blocks, nor an empty one', () => {
    expect(splitRange({ fromBlock: 5, toBlock: 6 }, 8)).toEqual([
      { fromBlock: 6, toBlock: 6 },
      { fromBlock: 5, toBlock: 5 },
    ]);
    expect(splitRange({ fromBlock: 7, toBlock: 6 }, 2)).toEqual([]);
  });
});

describe('planRun', () => {
  it('reads an explicit range as given', () => {
    const plan = planRun({ ...base, contracts: [{ address: A, fromBlock: 100, toBlock: 199 }] });
    expect(plan.ranges).toEqual([{ contract: A, fromBlock: 100, toBlock: 199, chunks: splitRange({ fromBlock: 100, toBlock: 199 }, 4) }]);
    expect(plan.notes).toEqual([]);
  });

  it('caps a toBlock beyond the head at the head, with a warning', () => {
    const plan = planRun({ ...base, contracts: [{ address: A, fromBlock: 900, toBlock: 5000 }] });
    expect(plan.ranges[0]).toMatchObject({ fromBlock: 900, toBlock: 1000 });
    expect(plan.notes).toEqual([{ contract: A, level: 'warn', message: expect.stringMatching(/beyond the chain head 1000/) }]);
  });

  it('warns once, and reads nothing, for a range wholly beyond the head: no cap that would read up to the head', () => {
    const plan = planRun({ ...base, contracts: [{ address: A, fromBlock: 3000, toBlock: 5000 }] });
    expect(plan.ranges).toEqual([]);
    expect(plan.notes).toEqual([
      { contract: A, level: 'warn', message: 'blocks 3000–5000 are all beyond the chain head 1000: nothing to read until the chain reaches block 3000' },
    ]);
  });

  it('runs an open-ended contract to the head, first from fromBlock, then from its last end minus finality', () => {
    expect(planRun({ ...base, contracts: [{ address: A, fromBlock: 10 }] }).ranges[0]).toMatchObject({ fromBlock: 10, toBlock: 1000 });
    const again = planRun({ ...base, contracts: [{ address: A, fromBlock: 10 }], lastCovered: new Map([[A, 900]]) });
    expect(again.ranges[0]).toMatchObject({ fromBlock: 837, toBlock: 1000 });
    const short = planRun({ ...base, contracts: [{ address: A, fromBlock: 880 }], lastCovered: new Map([[A, 900]]) });
    expect(short.ranges[0]).toMatchObject({ fromBlock: 880, toBlock: 1000 });
  });

  it('warns when the chain head is further below what an open-ended contract covered than its finality', () => {
    // a few blocks back, as nodes behind one load balancer differ: the last blocks are read again, nothing said
    const behind = planRun({ ...base, contracts: [{ address: A, fromBlock: 10 }], lastCovered: new Map([[A, 1_030]]) });
    expect(behind.ranges[0]).toMatchObject({ fromBlock: 967, toBlock: 1000 });
    expect(behind.notes).toEqual([]);
    const farBehind = planRun({ ...base, contracts: [{ address: A, fromBlock: 10 }], lastCovered: new Map([[A, 5_000]]) });
    expect(farBehind.ranges).toEqual([]);
    expect(farBehind.notes[0]).toEqual({
      contract: A,
      level: 'warn',
      message:
        'the chain head 1000 is 4000 blocks below block 5000, which this job covered already: the endpoint is behind (a node still syncing, or another chain than it should serve); nothing is read until it catches up',
    });
    expect(farBehind.notes.map((n) => n.level)).toEqual(['warn', 'info']);
    // a head that has not moved, with no finality, or a fromBlock moved past the head: not behind
    const still = planRun({ ...base, finality: 0, contracts: [{ address: A, fromBlock: 10 }], lastCovered: new Map([[A, 1_000]]) });
    expect(still.notes.map((n) => n.level)).toEqual(['info']);
    const past = planRun({ ...base, contracts: [{ address: A, fromBlock: 2_000 }], lastCovered: new Map([[A, 1_000]]) });
    expect(past.notes.map((n) => n.level)).toEqual(['info']);
  });

  it('reads an open-ended contract from its fromBlock again when it moved before the first block the job covered, saying so', () => {
    const covered = { lastCovered: new Map([[A, 900]]), firstCovered: new Map([[A, 400]]) };
    const moved = planRun({ ...base, contracts: [{ address: A, fromBlock: 100 }], ...covered });
    expect(moved.ranges[0]).toMatchObject({ fromBlock: 100, toBlock: 1000 });
    expect(moved.notes).toEqual([
      {
        contract: A,
        level: 'warn',
        message:
          "fromBlock 100 is before the first block this job covered (400): reading 100–1000, the blocks covered already included (their rows are compared with the warehouse's, not written again)",
      },
    ]);
    // where it starts at or after the first covered block, from the last end minus finality, as before
    const same = planRun({ ...base, contracts: [{ address: A, fromBlock: 400 }], ...covered });
    expect(same.ranges[0]).toMatchObject({ fromBlock: 837, toBlock: 1000 });
    expect(same.notes).toEqual([]);
  });

  it('leaves a contract that starts past the head alone, saying so', () => {
    const plan = planRun({
      ...base,
      contracts: [
        { address: A, fromBlock: 0, toBlock: 10 },
        { address: B, fromBlock: 2000 },
      ],
    });
    expect(plan.ranges.map((r) => r.contract)).toEqual([A]);
    expect(plan.notes).toEqual([{ contract: B, level: 'info', message: expect.stringMatching(/nothing to read/) }]);
  });

  it('shares the chunks out over the contracts, at least one each, so the extra requests stay bounded', () => {
    const three = [A, B, `0x${'cc'.repeat(20)}`].map((address) => ({ address, fromBlock: 0, toBlock: 999 }));
    expect(planRun({ ...base, chunks: 8, contracts: three }).ranges.map((r) => r.chunks.length)).toEqual([3, 3, 2]);
    expect(planRun({ ...base, chunks: 2, contracts: three }).ranges.map((r) => r.chunks.length)).toEqual([1, 1, 1]);
    const one = planRun({ ...base, chunks: 8, contracts: [{ address: A, fromBlock: 0, toBlock: 999 }] });
    expect(one.ranges[0]!.chunks).toEqual(splitRange({ fromBlock: 0, toBlock: 999 }, 8));
  });
});
