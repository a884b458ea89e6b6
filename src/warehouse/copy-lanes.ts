import type { Logger } from 'pino';
import type { Clock } from '../common/clock.ts';
import type { TimeBudget } from '../common/time-budget.ts';
import { openCopyGroup, type CopyGroup, type GroupPolicy } from './copy-group.ts';
import type { Warehouse } from './db.ts';

/**
 * The most COPY streams a run writes through, whatever its concurrency: the exporter parses on one core, and two
 * PostgreSQL backends keep up with it, where more insert into the same indexes side by side, each slower per row.
 * Measured on a 2-core machine with PostgreSQL 15 (bench/NOTES.md, "A twentieth day"): plain `\copy`s of 200,000
 * transfers into token_transfers as a first load leaves it (primary key and one lookup index) took 1.5 s of
 * PostgreSQL's CPU as one COPY, 2.0 s as two at once and 2.5–2.7 s as four (wall 1.6, 1.3 and 1.9–2.0 s). First loads
 * of 1,000,000 transfers with `--concurrency 4` took 20.5–23.0 s through two lanes, 22.2–24.3 s through four and
 * 23.9–26.4 s through one.
 */
const COPY_LANES = 2;

/** A fresh chunk's share of a lane: the group it writes its pages into, until it lets go of it. */
export interface CopyLease {
  group: CopyGroup;
  /** The chunk writes no more pages into the group (each one it wrote was committed before: `CopyGroup.flush`). */
  release(): void;
}

/**
 * A run's COPY streams into token_transfers, fewer than the chunks it reads at once: each fresh chunk writes its pages
 * into the lane the fewest chunks write into when it starts, and a lane's transaction holds the pages of each of its
 * chunks, every chunk's checkpoint committed with them (`CopyGroup`).
 */
export interface CopyLanes {
  take(): CopyLease;
  /** Commits what is still open in each lane and gives its connection back; rejects with the first failure. */
  close(): Promise<void>;
}

/** How a run's lanes commit: `commitRows` shared by its lanes, at most `COPY_LANES` and never more than `concurrency`. */
export interface LanePolicy {
  commitRows: number;
  concurrency: number;
  /** A lane's transaction commits at the latest this long after its first page (`GroupPolicy.maxAgeMs`). */
  maxAgeMs: number;
}

/**
 * @example const lanes = openCopyLanes(warehouse, { logger, clock }, { commitRows: 10_000, concurrency: 4, maxAgeMs: GROUP_MAX_AGE_MS }); // two lanes of 5,000 rows
 * const lease = lanes.take(); await lease.group.add(load, scope); await lease.group.flush(); lease.release();
 * await lanes.close();
 */
export function openCopyLanes(warehouse: Warehouse, deps: { logger: Logger; clock: Clock; budget?: TimeBudget | undefined }, policy: LanePolicy): CopyLanes {
  const count = Math.max(1, Math.min(policy.concurrency, COPY_LANES));
  // each lane's transaction commits at its share: the rows held do not grow with the chunks read at once
  const group: GroupPolicy = { maxRows: Math.ceil(policy.commitRows / count), maxAgeMs: policy.maxAgeMs };
  // a group opens its connection with its first page: lanes no chunk takes cost nothing
  const lanes = Array.from({ length: count }, () => ({ group: openCopyGroup(warehouse, deps, group), chunks: 0 }));
  return {
    take() {
      const lane = lanes.reduce((best, l) => (l.chunks < best.chunks ? l : best));
      lane.chunks++;
      let held = true;
      return {
        group: lane.group,
        release() {
          if (held) lane.chunks--;
          held = false;
        },
      };
    },
    async close() {
      const closed = await Promise.allSettled(lanes.map((l) => l.group.close()));
      const failed = closed.find((c): c is PromiseRejectedResult => c.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}
