/** What the reference server counts, served at `GET /__stats`. */
export interface DevnetStats {
  getTokenTransfers: number;
  rpcHttpRequests: number;
  rpcCalls: Record<string, number>;
  /** Keyed by HTTP status (`"429"`), JSON-RPC code (`"-32000"`), or `"reset"` / `"truncated"` for cut responses. */
  errors: Record<string, number>;
}

export function createStats() {
  let stats: DevnetStats = empty();
  return {
    countTransfersRequest: () => void stats.getTokenTransfers++,
    countRpcRequest: () => void stats.rpcHttpRequests++,
    countRpcCall: (method: string) => {
      stats.rpcCalls[method] = (stats.rpcCalls[method] ?? 0) + 1;
    },
    countError: (key: string | number) => {
      stats.errors[String(key)] = (stats.errors[String(key)] ?? 0) + 1;
    },
    snapshot: (): DevnetStats => structuredClone(stats),
    reset: () => {
      stats = empty();
    },
  };
}

export type StatsCounter = ReturnType<typeof createStats>;

function empty(): DevnetStats {
  return { getTokenTransfers: 0, rpcHttpRequests: 0, rpcCalls: {}, errors: {} };
}
