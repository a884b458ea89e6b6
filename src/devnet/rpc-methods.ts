import type { HeaderJson } from '../eth/header-fields.ts';
import { toQuantity } from '../eth/hex.ts';
import { call, getBlockByHash, getBlockByNumber, getLogs, type NodeContext } from './node-methods.ts';
import { arity, blockNumberArgument, hashArgument } from './rpc-arguments.ts';
import { RpcFailure } from './rpc-errors.ts';

export interface RpcMethodContext extends NodeContext {
  chainId: number;
  /** `false`: the `erigon_*` methods do not exist (`-32601`), as on geth, reth and most providers. */
  erigon?: boolean | undefined;
}

type Method = (params: unknown[], ctx: RpcMethodContext) => unknown;

/** The methods the reference server answers: Erigon's header methods, and the standard ones every node has. */
const RPC_METHODS: Record<string, Method> = {
  erigon_getHeaderByHash(params, ctx) {
    arity(params, 1);
    const hash = hashArgument(params[0]);
    const header = ctx.headerLags(hash) ? undefined : ctx.chain.headerByHash(hash);
    if (!header) throw new RpcFailure('notFound', `block header not found: ${hash}`);
    return header;
  },
  erigon_getHeaderByNumber(params, ctx) {
    arity(params, 1);
    const number = blockNumberArgument(params[0], ctx.chain);
    const header: HeaderJson | undefined = ctx.chain.headerByNumber(number);
    if (!header) throw new RpcFailure('notFound', `block header not found: ${number}`);
    return header;
  },
  eth_blockNumber(params, ctx) {
    arity(params, 0);
    return toQuantity(Math.max(ctx.chain.head(), 0));
  },
  eth_chainId(params, ctx) {
    arity(params, 0);
    return toQuantity(ctx.chainId);
  },
  eth_getLogs: getLogs,
  eth_getBlockByHash: getBlockByHash,
  eth_getBlockByNumber: getBlockByNumber,
  eth_call: call,
};

/**
 * The method called `name`, as this server is configured; throws -32601 with geth's message for a method it
 * does not answer (any `erigon_*` one under `--no-erigon`).
 */
export function rpcMethod(name: string, ctx: RpcMethodContext): Method {
  const method = Object.hasOwn(RPC_METHODS, name) ? RPC_METHODS[name] : undefined;
  if (!method || (ctx.erigon === false && name.startsWith('erigon_'))) {
    throw new RpcFailure('methodNotFound', `the method ${name} does not exist/is not available`);
  }
  return method;
}
