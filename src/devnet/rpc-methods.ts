import type { HeaderJson } from '../eth/header-fields.ts';
import { toQuantity } from '../eth/hex.ts';
import type { ChainStore } from './chain-store.ts';
import { RpcFailure } from './rpc-errors.ts';

export interface RpcMethodContext {
  chain: ChainStore;
  chainId: number;
  /** `true` when this lookup must answer "not found" (a lagging node behind a load balancer). */
  headerLags(hash: string): boolean;
}

type Method = (params: unknown[], ctx: RpcMethodContext) => unknown;

/** The methods the reference server answers, each as a real Erigon-backed endpoint does. */
export const RPC_METHODS: Record<string, Method> = {
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
};

function arity(params: unknown[], max: number) {
  if (params.length > max) throw new RpcFailure('invalidParams', `too many arguments, want at most ${max}`);
  if (params.length < max) throw new RpcFailure('invalidParams', `missing value for required argument ${params.length}`);
}

/** A 32-byte hash argument, with geth's messages for each way it can be wrong. */
function hashArgument(value: unknown): string {
  const type = 'common.Hash';
  if (typeof value !== 'string') {
    throw new RpcFailure('invalidParams', `invalid argument 0: json: cannot unmarshal non-string into Go value of type ${type}`);
  }
  if (!/^0[xX]/.test(value)) {
    throw new RpcFailure('invalidParams', `invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type ${type}`);
  }
  const digits = value.slice(2);
  if (!/^[0-9a-fA-F]*$/.test(digits)) {
    throw new RpcFailure('invalidParams', `invalid argument 0: json: cannot unmarshal invalid hex string into Go value of type ${type}`);
  }
  if (digits.length !== 64) {
    throw new RpcFailure('invalidParams', `invalid argument 0: hex string has length ${digits.length}, want 64 for ${type}`);
  }
  return `0x${digits.toLowerCase()}`;
}

const TAGS = new Set(['latest', 'pending', 'safe', 'finalized', 'earliest']);

/** A block number argument: a 0x hex quantity, a tag, or (as newer nodes accept) a JSON integer. */
function blockNumberArgument(value: unknown, chain: ChainStore): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && TAGS.has(value)) {
    const head = Math.max(chain.head(), 0);
    if (value === 'earliest') return 0;
    if (value === 'safe') return Math.max(head - 32, 0);
    if (value === 'finalized') return Math.max(head - 64, 0);
    return head;
  }
  if (typeof value === 'string' && /^0[xX][0-9a-fA-F]{1,13}$/.test(value)) return Number.parseInt(value.slice(2), 16);
  throw new RpcFailure(
    'invalidParams',
    `invalid argument 0: hex string ${JSON.stringify(value)} is not a block number (want 0x hex or latest, earliest, pending, safe, finalized)`,
  );
}
