/**
 * Until a node source's first `eth_getLogs` answer, its queries go one at a time. Nothing is known of the provider's
 * limits then: queries sent together (one per chunk read at once) are each refused and each walk down on their own,
 * four refusals for every one a lone query meets. After the first answer the ranges the refusals taught are every
 * query's, and all go at once.
 */
export interface FirstAnswerGate {
  /**
   * Waits while another query holds the turn and none has been answered; then this query goes. Returns what ends its
   * turn (call it once the query is answered or has failed).
   */
  turn(): Promise<() => void>;
  /** A query was answered: every query goes, now and from now on. */
  answered(): void;
}

/**
 * @example const gate = createFirstAnswerGate();
 * const done = await gate.turn(); try { await read(); gate.answered(); } finally { done(); }
 */
export function createFirstAnswerGate(): FirstAnswerGate {
  let open = false;
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
    answered() {
      if (open) return;
      open = true;
      const waking = held;
      held = undefined;
      waking?.end();
    },
  };
}
