/** JSON-RPC error codes as Erigon/geth and the hosted service use them (chain-api.md §2), with their HTTP status. */
export const RPC_ERRORS = {
  parse: { code: -32700, status: 400 },
  invalidRequest: { code: -32600, status: 400 },
  methodNotFound: { code: -32601, status: 400 },
  invalidParams: { code: -32602, status: 400 },
  notFound: { code: -32000, status: 200 },
  /** `eth_call` that reverts, as geth answers a revert without reason data. */
  reverted: { code: -32000, status: 200 },
  /** An `eth_getLogs` query over a provider's limit: the code varies by provider (node-source.md), HTTP 200. */
  logsLimit: { code: -32005, status: 200 },
  unauthorized: { code: -32099, status: 401 },
  rateLimited: { code: -32097, status: 429 },
  internal: { code: -32603, status: 500 },
} as const;

export type RpcErrorKind = keyof typeof RPC_ERRORS;

export class RpcFailure extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(
    readonly kind: RpcErrorKind,
    message: string,
    /** A code other than the kind's (each provider's limit error has its own), and the error's `data`. */
    extra: { code?: number; data?: unknown } = {},
  ) {
    super(message);
    this.code = extra.code ?? RPC_ERRORS[kind].code;
    this.data = extra.data;
  }
}

export type RpcId = string | number | null;

export function rpcErrorBody(id: RpcId, code: number, message: string, data?: unknown) {
  return { jsonrpc: '2.0' as const, id, error: data === undefined ? { code, message } : { code, message, data } };
}
