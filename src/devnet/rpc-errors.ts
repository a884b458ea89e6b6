/** JSON-RPC error codes as Erigon/geth and the hosted service use them (chain-api.md §2), with their HTTP status. */
export const RPC_ERRORS = {
  parse: { code: -32700, status: 400 },
  invalidRequest: { code: -32600, status: 400 },
  methodNotFound: { code: -32601, status: 400 },
  invalidParams: { code: -32602, status: 400 },
  notFound: { code: -32000, status: 200 },
  unauthorized: { code: -32099, status: 401 },
  rateLimited: { code: -32097, status: 429 },
  internal: { code: -32603, status: 500 },
} as const;

export type RpcErrorKind = keyof typeof RPC_ERRORS;

export class RpcFailure extends Error {
  constructor(
    readonly kind: RpcErrorKind,
    message: string,
  ) {
    super(message);
  }
  get code(): number {
    return RPC_ERRORS[this.kind].code;
  }
}

export type RpcId = string | number | null;

export function rpcErrorBody(id: RpcId, code: number, message: string) {
  return { jsonrpc: '2.0' as const, id, error: { code, message } };
}
