/**
 * Where a run's wall time goes (`run`/`backfill --time-budget FILE`): the stages time what they do, and the run's
 * span is split between them. Stages overlap (pages are read while others load), so each stretch of time counts
 * once, for the first part in this order that was under way then:
 * - `parse`: parsing and validating what the API answered (JSON, rows, logs, blooms);
 * - `copy`: COPY and merge of a page's rows (and the digest of a page the warehouse may hold already);
 * - `commit`: a page's transaction and checkpoint, reconciliation and the run ledger;
 * - `headers`: block headers fetched, verified and stored;
 * - `api`: waiting on a page from the API.
 * What none of them covers is `other` (planning, locks, token metadata, the chain head).
 */
export const BUDGET_PARTS = ['parse', 'copy', 'commit', 'headers', 'api'] as const;
export type BudgetPart = (typeof BUDGET_PARTS)[number];

export interface BudgetInterval {
  part: BudgetPart;
  /** Milliseconds on the budget's clock. */
  start: number;
  end: number;
}

export interface BudgetReport {
  /** Epoch milliseconds of the budget's start and of the report. */
  startedAt: number;
  endedAt: number;
  /** Seconds of the span per part, `other` for the rest: they add up to the span. */
  seconds: Record<BudgetPart | 'other', number>;
}

export interface TimeBudget {
  /** Counts the life of `work`'s promise as `part`. */
  time<T>(part: BudgetPart, work: () => Promise<T>): Promise<T>;
  /** Counts a synchronous stretch as `part`. */
  timeSync<T>(part: BudgetPart, work: () => T): T;
  /** The span from the budget's start to now, split (`splitSpan`). */
  report(): BudgetReport;
}

/** The budget of a run nobody asked about: times nothing, keeps nothing. */
export const NO_BUDGET: TimeBudget = {
  time: (_part, work) => work(),
  timeSync: (_part, work) => work(),
  report: () => {
    throw new Error('no time budget was kept for this run');
  },
};

/**
 * A budget that keeps every interval from now on (a few per page, and one per chunk of a node's answer read as it
 * comes; a run's, not a worker's whole life).
 *
 * @example const budget = createTimeBudget(); await budget.time('api', () => source.fetchPage(q)); budget.report().seconds.api // → 0.12
 */
export function createTimeBudget(now: () => number = () => performance.now(), epochNow: () => number = () => Date.now()): TimeBudget {
  const origin = now();
  const startedAt = epochNow();
  const intervals: BudgetInterval[] = [];
  return {
    async time(part, work) {
      const start = now();
      try {
        return await work();
      } finally {
        intervals.push({ part, start, end: now() });
      }
    },
    timeSync(part, work) {
      const start = now();
      try {
        return work();
      } finally {
        intervals.push({ part, start, end: now() });
      }
    },
    report() {
      const end = now();
      const ms = splitSpan(intervals, origin, end);
      const seconds = Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, v / 1000])) as BudgetReport['seconds'];
      return { startedAt, endedAt: startedAt + (end - origin), seconds };
    },
  };
}

/**
 * Splits [from, to] between the parts: each stretch goes to the first part of `BUDGET_PARTS` with an interval
 * under way there, else to `other`. The results add up to `to − from`. Pure.
 *
 * @example splitSpan([{ part: 'api', start: 0, end: 10 }, { part: 'parse', start: 8, end: 12 }], 0, 20)
 * // → { parse: 4, copy: 0, commit: 0, headers: 0, api: 8, other: 8 }
 */
export function splitSpan(intervals: readonly BudgetInterval[], from: number, to: number): Record<BudgetPart | 'other', number> {
  const out = { parse: 0, copy: 0, commit: 0, headers: 0, api: 0, other: 0 };
  const rank = new Map<BudgetPart, number>(BUDGET_PARTS.map((p, i) => [p, i]));
  // +1 where an interval starts, −1 where it ends; at one instant, ends before starts
  const events: { at: number; rank: number; delta: 1 | -1 }[] = [];
  for (const i of intervals) {
    const start = Math.max(from, i.start);
    const end = Math.min(to, i.end);
    if (end <= start) continue;
    const r = rank.get(i.part)!;
    events.push({ at: start, rank: r, delta: 1 }, { at: end, rank: r, delta: -1 });
  }
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  const open = BUDGET_PARTS.map(() => 0);
  let at = from;
  for (const e of events) {
    if (e.at > at) {
      const r = open.findIndex((n) => n > 0);
      out[r < 0 ? 'other' : BUDGET_PARTS[r]!] += e.at - at;
      at = e.at;
    }
    open[e.rank]! += e.delta;
  }
  out.other += Math.max(0, to - at);
  return out;
}
