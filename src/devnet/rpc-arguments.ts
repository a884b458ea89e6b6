/**
 * JSON-RPC arguments as geth reads them, with geth's messages for each way one can be wrong: counts, hashes,
 * block numbers and tags. Block tags resolve against the chain the server holds.
 */
import { RpcFailure } from './rpc-errors.ts';

/** What a block tag needs to know of the chain: its lowest and highest block (−1 for an empty chain). */
export interface TagChain {
  head(): number;
  lowest(): number;
}

/** Throws unless `params` holds from `min` to `max` arguments (exactly `min` when `max` is left out). */
export function arity(params: unknown[], min: number, max = min) {
  if (params.length > max) throw new RpcFailure('invalidParams', `too many arguments, want at most ${max}`);
  if (params.length < min) throw new RpcFailure('invalidParams', `missing value for required argument ${params.length}`);
}

/**
 * A 32-byte hash argument, lower-cased.
 *
 * @example hashArgument('0x12') // throws -32602 'invalid argument 0: hex string has length 2, want 64 for common.Hash'
 */
export function hashArgument(value: unknown, where = 'invalid argument 0'): string {
  return fixedHex(value, 32, 'common.Hash', where);
}

/** A 20-byte address argument, lower-cased. */
export function addressArgument(value: unknown, where: string): string {
  return fixedHex(value, 20, 'common.Address', where);
}

function fixedHex(value: unknown, bytes: number, type: string, where: string): string {
  if (typeof value !== 'string') {
    throw new RpcFailure('invalidParams', `${where}: json: cannot unmarshal non-string into Go value of type ${type}`);
  }
  if (!/^0[xX]/.test(value)) {
    throw new RpcFailure('invalidParams', `${where}: json: cannot unmarshal hex string without 0x prefix into Go value of type ${type}`);
  }
  const digits = value.slice(2);
  if (!/^[0-9a-fA-F]*$/.test(digits)) {
    throw new RpcFailure('invalidParams', `${where}: json: cannot unmarshal invalid hex string into Go value of type ${type}`);
  }
  if (digits.length !== 2 * bytes) {
    throw new RpcFailure('invalidParams', `${where}: hex string has length ${digits.length}, want ${2 * bytes} for ${type}`);
  }
  return `0x${digits.toLowerCase()}`;
}

const TAGS = new Set(['latest', 'pending', 'safe', 'finalized', 'earliest']);

/** How far behind the head the `safe` and `finalized` tags stand (a mainnet epoch and two). */
const SAFE_DEPTH = 32;
const FINALIZED_DEPTH = 64;

/** Whether `value` is a block tag (`latest`, `safe`, …) rather than a number. */
export function isBlockTag(value: unknown): boolean {
  return typeof value === 'string' && TAGS.has(value);
}

/**
 * A block number argument: a 0x hex quantity, a tag, or (as newer nodes accept) a JSON integer. `earliest` is
 * the lowest block held, `safe` and `finalized` stand 32 and 64 blocks behind the head (never below the lowest).
 *
 * @example blockNumberArgument('finalized', chainFrom18MTo18M4999) // → 18_004_935
 */
export function blockNumberArgument(value: unknown, chain: TagChain, where = 'invalid argument 0'): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && TAGS.has(value)) {
    const head = Math.max(chain.head(), 0);
    const lowest = Math.max(Math.min(chain.lowest(), head), 0);
    if (value === 'earliest') return lowest;
    if (value === 'safe') return Math.max(head - SAFE_DEPTH, lowest);
    if (value === 'finalized') return Math.max(head - FINALIZED_DEPTH, lowest);
    return head;
  }
  if (typeof value === 'string' && /^0[xX][0-9a-fA-F]{1,13}$/.test(value)) return Number.parseInt(value.slice(2), 16);
  throw new RpcFailure('invalidParams', `${where}: hex string ${JSON.stringify(value)} is not a block number (want 0x hex or latest, earliest, pending, safe, finalized)`);
}
