/**
 * Which contracts share an `eth_getLogs` call (node-source.md: several contracts in one call). The pipeline reads
 * each contract's chunks on their own, page after page from the top down, asking for the next page as soon as it
 * has one; the node source answers a page with one call. Contracts read over the same blocks go through the
 * same tops, so one call can answer all of them: a call at top T names the asker and every contract expected to
 * ask at T next (its last call's span ended just above T), at most `maxContracts`; what the call finds for the
 * others waits for them (one answer per contract, taken by the query it was meant for, else dropped).
 *
 * Spans align: a call starts where the shortest recent span holding its top started, when the caller takes it (a
 * span much shorter than the call's own range would leave its answer short), so chunks of contracts with like
 * ranges that start at different blocks meet the others' spans after one page, and move in step from there.
 * Pure bookkeeping: the caller makes the calls.
 */

/** A query (a chunk's: a contract and its blocks) that reads page after page from the top down. */
export interface Member {
  contract: string;
  fromBlock: number;
  toBlock: number;
}

/** A query's identity: chunks of one contract read at once are different queries. */
export function memberKey(m: Member): string {
  return `${m.contract}:${m.fromBlock}:${m.toBlock}`;
}

export interface LogsGroups<S> {
  /** The share a call made for this query at `top`, taken once; else undefined. */
  take(member: Member, top: number): Promise<S> | undefined;
  /**
   * The contracts a call at `top` names: the asker first, then those expected there with no share waiting, of the
   * contracts `named` lets in (all by default), up to the most a call may name.
   */
  members(asker: Member, top: number, named?: (contract: string) => boolean): Member[];
  /**
   * Where a call at `top` starts to meet the spans of earlier calls: the first block of the (shortest) recent span
   * that holds `top`, so the next call starts where theirs did; undefined when none does.
   */
  spanFrom(top: number): number | undefined;
  /** A call over [from, top] for `members` is on its way: each of them asks next at `from - 1`, if its query goes on below. */
  issued(members: readonly Member[], top: number, from: number): void;
  /** A call for the asker names `others` too: what it finds for each waits for that member (a rejected share: it asks on its own). */
  share(others: readonly Member[], top: number, shares: (member: Member) => Promise<S>): void;
  /** The query ended or failed: nothing is expected of it. */
  forget(member: Member): void;
  /**
   * Queries of other contracts a call for `asker` at `top` would leave behind: expected to ask within `window` blocks
   * above `top`, on their way down to it, or at `top` once they took a share waiting for them (a call cannot name them
   * before). A query that runs one span ahead of the others over the same blocks (it started a call before them) would
   * stay ahead, alone, call after call: waiting for them makes one call name them all from there on. Undefined when no query is behind; else `caughtUp` resolves once a share for `asker` at `top` is made
   * (a query behind called there and named it) or no query is behind any more (they moved on, or ended), and
   * `cancel` lets go of it (the caller stopped waiting).
   */
  behind(asker: Member, top: number, window: number): { caughtUp: Promise<void>; cancel(): void } | undefined;
  /** Whether a query waits (`behind`) at `top` for others to come down to it: a call just above may end there to meet it. */
  awaited(top: number): boolean;
}

/** Tops whose spans are remembered: enough for every chunk of a run to meet the calls of the others. */
const SPANS_REMEMBERED = 4_096;

/**
 * @example
 * const groups = createLogsGroups<Slice>(50);
 * groups.members(usdcChunk, 999); // → [usdcChunk] (nobody is expected yet)
 * groups.issued([usdcChunk], 999, 500); // usdc asks at 499 next
 */
export function createLogsGroups<S>(maxContracts: number): LogsGroups<S> {
  if (!Number.isSafeInteger(maxContracts) || maxContracts < 1) throw new RangeError(`maxContracts must be a positive integer, got ${maxContracts}`);
  const expected = new Map<string, Member & { top: number }>();
  const waiting = new Map<string, { top: number; share: Promise<S> }>();
  const spans = new Map<number, number>();
  const waiters = new Set<{ asker: Member; top: number; window: number; resolve(): void }>();

  // expected above `top` on the way down to it, or at it with a share still to take first (it asks at `top` next)
  const isBehind = (asker: Member, top: number, window: number) => {
    for (const [key, e] of expected) {
      if (e.contract === asker.contract || e.fromBlock > top) continue;
      if ((e.top > top && e.top - top <= window) || (e.top === top && waiting.has(key))) return true;
    }
    return false;
  };
  /** After every change: the waiters whose share came, or who wait for nobody now, go on. */
  const wake = () => {
    for (const w of waiters) {
      if (waiting.get(memberKey(w.asker))?.top === w.top || !isBehind(w.asker, w.top, w.window)) {
        waiters.delete(w);
        w.resolve();
      }
    }
  };

  return {
    take(member, top) {
      const key = memberKey(member);
      const share = waiting.get(key);
      if (share === undefined) return undefined;
      waiting.delete(key);
      return share.top === top ? share.share : undefined;
    },
    members(asker, top, named = () => true) {
      const out: Member[] = [asker];
      const names = new Set([asker.contract]);
      for (const [key, e] of expected) {
        if (out.length >= maxContracts) break;
        // one query per contract in a call: its logs are told apart by contract
        if (e.top !== top || names.has(e.contract) || waiting.has(key) || !named(e.contract)) continue;
        names.add(e.contract);
        out.push({ contract: e.contract, fromBlock: e.fromBlock, toBlock: e.toBlock });
      }
      return out;
    },
    spanFrom(top) {
      let best: number | undefined;
      for (const [end, from] of spans) if (from <= top && end >= top && (best === undefined || from > best)) best = from;
      return best;
    },
    issued(members, top, from) {
      spans.delete(top);
      spans.set(top, from);
      if (spans.size > SPANS_REMEMBERED) spans.delete(spans.keys().next().value!);
      for (const m of members) {
        if (from > m.fromBlock) expected.set(memberKey(m), { ...m, top: from - 1 });
        else expected.delete(memberKey(m));
      }
      if (waiters.size) wake();
    },
    share(others, top, shares) {
      for (const m of others) {
        const share = shares(m);
        share.catch(() => undefined); // the member asks on its own
        waiting.set(memberKey(m), { top, share });
      }
      if (waiters.size) wake();
    },
    forget(member) {
      expected.delete(memberKey(member));
      waiting.delete(memberKey(member));
      if (waiters.size) wake();
    },
    behind(asker, top, window) {
      if (!isBehind(asker, top, window)) return undefined;
      let waiter: { asker: Member; top: number; window: number; resolve(): void } | undefined;
      const caughtUp = new Promise<void>((resolve) => {
        waiter = { asker, top, window, resolve };
        waiters.add(waiter);
      });
      return { caughtUp, cancel: () => waiters.delete(waiter!) };
    },
    awaited(top) {
      for (const w of waiters) if (w.top === top) return true;
      return false;
    },
  };
}
