import { splitRange, type BlockSpan } from './chunks.ts';

export interface PlanContract {
  address: string;
  fromBlock: number;
  toBlock?: number;
}

export interface PlanInput {
  contracts: readonly PlanContract[];
  /** Newest block of the chain. */
  head: number;
  /** Blocks re-read at the end of what a job covered, to catch reorgs (job `finality`). */
  finality: number;
  /**
   * Chunks in all, shared out over the ranges (each range gets at least one). Every chunk may end in a
   * partial page, so n chunks cost at most n − 1 requests more than one chunk would.
   */
  chunks: number;
  /** The highest block this job has covered per contract, if any. */
  lastCovered: ReadonlyMap<string, number>;
  /** The lowest block this job has covered per contract, if any: a `fromBlock` moved before it is read from there. */
  firstCovered?: ReadonlyMap<string, number>;
}

export interface PlannedRange extends BlockSpan {
  contract: string;
  chunks: BlockSpan[];
}

export interface Plan {
  ranges: PlannedRange[];
  /** What the user should know: a toBlock past the head, a contract with nothing to read. */
  notes: { contract: string; level: 'warn' | 'info'; message: string }[];
}

/**
 * Decides what a run reads, per contract: an explicit `toBlock` is capped at the head (with a warning);
 * without one the contract runs to the head, from where the job last ended minus `finality` blocks
 * (or from `fromBlock` the first time, or when `fromBlock` moved before the first block the job covered, with a
 * warning). Pure: everything it needs is passed in.
 *
 * @example planRun({ contracts: [{ address: a, fromBlock: 100 }], head: 500, finality: 64, chunks: 2,
 *   lastCovered: new Map([[a, 400]]) }) // → one range 337…500 in 2 chunks
 */
export function planRun(input: PlanInput): Plan {
  const ranges: PlannedRange[] = [];
  const notes: Plan['notes'] = [];
  for (const c of input.contracts) {
    let fromBlock = c.fromBlock;
    let toBlock = c.toBlock ?? input.head;
    if (c.toBlock !== undefined && c.fromBlock > input.head) {
      // not capped: there is nothing up to the head to read
      const message = `blocks ${c.fromBlock}–${c.toBlock} are all beyond the chain head ${input.head}: nothing to read until the chain reaches block ${c.fromBlock}`;
      notes.push({ contract: c.address, level: 'warn', message });
      continue;
    }
    if (c.toBlock !== undefined && c.toBlock > input.head) {
      notes.push({ contract: c.address, level: 'warn', message: `toBlock ${c.toBlock} is beyond the chain head ${input.head}: reading up to ${input.head}` });
      toBlock = input.head;
    }
    const last = input.lastCovered.get(c.address);
    const first = input.firstCovered?.get(c.address);
    if (c.toBlock === undefined && last !== undefined && first !== undefined && c.fromBlock < first) {
      // the job's fromBlock moved before what it covered: the blocks added are read with the rest, which writes nothing again
      const message =
        `fromBlock ${c.fromBlock} is before the first block this job covered (${first}): reading ${c.fromBlock}–${toBlock}, ` +
        `the blocks covered already included (their rows are compared with the warehouse's, not written again)`;
      notes.push({ contract: c.address, level: 'warn', message });
    } else if (c.toBlock === undefined && last !== undefined) {
      fromBlock = Math.max(c.fromBlock, last - input.finality + 1);
      // a head a few blocks back (nodes behind one load balancer) is read again as finality has it; further back is news
      if (last - input.head > input.finality) {
        const message =
          `the chain head ${input.head} is ${last - input.head} blocks below block ${last}, which this job covered already: the endpoint is ` +
          'behind (a node still syncing, or another chain than it should serve); nothing is read until it catches up';
        notes.push({ contract: c.address, level: 'warn', message });
      }
    }
    if (fromBlock > toBlock) {
      notes.push({ contract: c.address, level: 'info', message: `nothing to read: fromBlock ${fromBlock} is past ${toBlock}` });
      continue;
    }
    ranges.push({ contract: c.address, fromBlock, toBlock, chunks: [] });
  }
  ranges.forEach((r, i) => {
    const share = Math.floor(input.chunks / ranges.length) + (i < input.chunks % ranges.length ? 1 : 0);
    r.chunks = splitRange(r, Math.max(1, share));
  });
  return { ranges, notes };
}
