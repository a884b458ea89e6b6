/**
 * Blocks a contract's job has yet to cover: from the last block covered to the chain head, or to the contract's
 * `toBlock` when it ends before the head (a bounded contract read to its end lags 0, however far the head moves on).
 * A contract with no coverage yet reports 0, as before its first range closes.
 *
 * @example contractLag(1_000, undefined, 990) // → 10
 * contractLag(1_000, 900, 900) // → 0
 */
export function contractLag(head: number, toBlock: number | undefined, covered: number | undefined): number {
  const end = toBlock === undefined ? head : Math.min(head, toBlock);
  return covered === undefined ? 0 : Math.max(0, end - covered);
}
