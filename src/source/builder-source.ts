import type { SourceCounters } from '../common/source-counters.ts';
import type { HttpClient } from './http-client.ts';
import { chainIdOnce } from './node-rpc.ts';
import type { RpcClient } from './rpc-client.ts';
import type { Source } from './source.ts';
import type { TransfersClient } from './transfers-client.ts';
import type { TokenMetadata } from './transfers-page.ts';

/**
 * The hosted builder API as a source: `getTokenTransfers` pages, JSON-RPC headers by hash, and the
 * token metadata each page carries (the last page read of a contract tells it).
 */
export function createBuilderSource(clients: { http: HttpClient; transfers: TransfersClient; rpc: RpcClient; counters: SourceCounters }): Source {
  const { http, transfers, rpc } = clients;
  const tokens = new Map<string, TokenMetadata>();
  const fetchPage: Source['fetchPage'] = async (query) => {
    const page = await transfers.fetchPage(query);
    tokens.set(query.contract, page.token);
    return page;
  };
  return {
    fetchPage,
    headersByHash: (hashes) => rpc.headersByHash(hashes),
    headerBatchSize: rpc.batchSize,
    chainId: chainIdOnce(http),
    chainHead: (contracts) => resolveHead(rpc, { fetchPage }, contracts),
    async tokenMetadata(contract) {
      return tokens.get(contract) ?? (await fetchPage({ contract, fromBlock: 0, toBlock: Number.MAX_SAFE_INTEGER, pageSize: 1 })).token;
    },
    // the builder API answers ERC-20 transfers only
    skippedLogs: () => new Map(),
    counters: clients.counters,
    close: () => http.close(),
  };
}

/**
 * The chain head: `eth_blockNumber`, or, where the endpoint lacks it, the newest transfer of the
 * job's contracts.
 */
export async function resolveHead(
  rpc: Pick<RpcClient, 'blockNumber'>,
  transfers: Pick<Source, 'fetchPage'>,
  contracts: readonly string[],
): Promise<{ head: number; from: 'eth_blockNumber' | 'newest transfer' }> {
  const head = await rpc.blockNumber();
  if (head !== undefined) return { head, from: 'eth_blockNumber' };
  let newest = -1;
  for (const contract of contracts) {
    const page = await transfers.fetchPage({ contract, fromBlock: 0, toBlock: Number.MAX_SAFE_INTEGER, pageSize: 1 });
    newest = Math.max(newest, page.transfers[0]?.blockNumber ?? -1);
  }
  return { head: newest, from: 'newest transfer' };
}
