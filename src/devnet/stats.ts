import { LogsAnswer } from './logs-answer.ts';

/** What the reference server counts, served at `GET /__stats`. */
export interface DevnetStats {
  getTokenTransfers: number;
  rpcHttpRequests: number;
  rpcCalls: Record<string, number>;
  /** Keyed by HTTP status (`"429"`), JSON-RPC code (`"-32000"`), or `"reset"` / `"truncated"` for cut responses. */
  errors: Record<string, number>;
  /**
   * Per JSON-RPC method, what became of its calls: answered with a result, or refused, by reason. A code alone
   * cannot tell an `eth_getLogs` refused for size in arbitrum's style (-32000) from an `eth_call` that reverts
   * (-32000 too); this can. Calls of a batch left unanswered because another call of it hangs count as neither.
   */
  rpcOutcomes: Record<string, RpcMethodOutcomes>;
  /** Logs in the `eth_getLogs` answers served. */
  logsServed: number;
}

/** What became of one method's calls. */
export interface RpcMethodOutcomes {
  answered: number;
  /** By reason: `RefusalReason`, e.g. `{ "resultsCap": 3, "hang": 1 }`. */
  refused: Record<string, number>;
}

/**
 * Why a call was refused: an `eth_getLogs` over the results cap (`resultsCap`) or the block-range cap
 * (`rangeCap`), or left unanswered (`hang`); otherwise the error's kind (`reverted`, `notFound`,
 * `invalidParams`, `methodNotFound`, …, as `RPC_ERRORS` names them).
 */
export type RefusalReason = 'resultsCap' | 'rangeCap' | 'hang' | (string & {});

export function createStats() {
  let stats: DevnetStats = empty();
  // keyed by what clients send: objects without a prototype, so `__proto__` is a method name like any other
  const outcomesOf = (method: string): RpcMethodOutcomes => {
    stats.rpcOutcomes[method] ??= { answered: 0, refused: Object.create(null) };
    return stats.rpcOutcomes[method];
  };
  return {
    countTransfersRequest: () => void stats.getTokenTransfers++,
    countRpcRequest: () => void stats.rpcHttpRequests++,
    countRpcCall: (method: string) => {
      stats.rpcCalls[method] = (stats.rpcCalls[method] ?? 0) + 1;
    },
    countError: (key: string | number) => {
      stats.errors[String(key)] = (stats.errors[String(key)] ?? 0) + 1;
    },
    /** A call answered with `result` (an `eth_getLogs` answer adds its logs to `logsServed`). */
    countAnswered: (method: string, result: unknown) => {
      outcomesOf(method).answered++;
      if (method === 'eth_getLogs' && result instanceof LogsAnswer) stats.logsServed += result.length;
    },
    countRefused: (method: string, reason: RefusalReason) => {
      const { refused } = outcomesOf(method);
      refused[reason] = (refused[reason] ?? 0) + 1;
    },
    snapshot: (): DevnetStats => structuredClone(stats),
    reset: () => {
      stats = empty();
    },
  };
}

export type StatsCounter = ReturnType<typeof createStats>;

function empty(): DevnetStats {
  return { getTokenTransfers: 0, rpcHttpRequests: 0, rpcCalls: {}, errors: {}, rpcOutcomes: Object.create(null), logsServed: 0 };
}
