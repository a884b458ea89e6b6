/**
 * Until a node source's first `eth_getLogs` answer over a whole range, its queries go one at a time. Nothing is known
 * of the provider's limits then: queries sent together (one per chunk read at once) are each refused and each walk
 * down on their own, four refusals for every one a lone query meets. After that answer the ranges the refusals taught
 * are every query's, and all go at once. An answer cut short by a chunk's end (a resumed chunk's last blocks) tells
 * nothing of the range: the next query goes, still alone, until `SHORT_ANSWERS` such answers came.
 */

/** Answers cut short after which queries go at once all the same: a run of short chunks is not read one by one. */
export const SHORT_ANSWERS = 8;

export interface FirstAnswerGate {
  /**
   * Waits while another query holds the turn and none has been answered; then this query goes. Returns what ends its
   * turn (call it once the query is answered or has failed).
   */
  turn(): Promise<() => void>;
  /** A query was answered over the whole range it asked (`full`) or less: after a full one, every query goes. */
  answered(full: boolean): void;
}

/**
 * @example const gate = createFirstAnswerGate();
 * const done = await gate.turn(); try { await read(); gate.answered(true); } finally { done(); }
 */
export function createFirstAnswerGate(): FirstAnswerGate {
  let open = false;
  let short = 0;
  /** The turn being held: settles when its query ends, or the first answer comes. */
  let held: { ended: Promise<void>; end: () => void } | undefined;
  return {
    async turn() {
      while (!open && held) await held.ended;
      if (open) return () => undefined;
      let end!: () => void;
      const mine = { ended: new Promise<void>((resolve) => (end = resolve)), end: () => end() };
      held = mine;
      return () => {
        if (held === mine) held = undefined;
        mine.end();
      };
    },
    answered(full) {
      if (open || (!full && ++short < SHORT_ANSWERS)) return;
      open = true;
      const waking = held;
      held = undefined;
      waking?.end();
    },
  };
}
