import type { PageSource } from './read-chunk.ts';

/**
 * The chain head: `eth_blockNumber`, or, where the endpoint lacks it, the newest transfer of the
 * job's contracts.
 */
export async function resolveHead(
  rpc: { blockNumber(): Promise<number | undefined> },
  transfers: PageSource,
  contracts: readonly string[],
): Promise<{ head: number; source: 'eth_blockNumber' | 'newest transfer' }> {
  const head = await rpc.blockNumber();
  if (head !== undefined) return { head, source: 'eth_blockNumber' };
  let newest = -1;
  for (const contract of contracts) {
    const page = await transfers.fetchPage({ contract, fromBlock: 0, toBlock: Number.MAX_SAFE_INTEGER, pageSize: 1 });
    newest = Math.max(newest, page.transfers[0]?.blockNumber ?? -1);
  }
  return { head: newest, source: 'newest transfer' };
}
