/** Test rows for the getTokenTransfers parsing tests: one builder, so the page and continuity tests agree on what a row looks like. */

/** A 32-byte hash of one repeated hex digit, e.g. `h('a')`. */
export const h = (digit: string) => `0x${digit.repeat(64)}`;
/** A 20-byte address of one repeated hex digit, e.g. `a('1')`. */
export const a = (digit: string) => `0x${digit.repeat(40)}`;

/**
 * A row of `tokenTransfers` as the API serves it (no contractAddress): block hash, timestamp and transaction hash
 * follow from the block number and log index, so rows of one block agree. `extra` overrides any field, with any value.
 */
export function transferRow(blockNumber: number, logIndex: number, extra: Record<string, unknown> = {}) {
  return {
    fromAddress: a('1'),
    toAddress: a('2'),
    value: '1000000',
    blockHash: h(String(blockNumber % 10)),
    blockNumber,
    blockTimestamp: `2023-04-08T21:26:${String(blockNumber % 60).padStart(2, '0')}.000Z`,
    transactionHash: h(String.fromCharCode(97 + ((blockNumber + logIndex) % 6))),
    transactionIndex: 3,
    logIndex,
    ...extra,
  };
}
