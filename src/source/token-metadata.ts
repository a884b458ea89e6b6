import { show } from '../dataset/validate.ts';
import { BadResponseError } from './errors.ts';
import type { HttpClient } from './http-client.ts';
import { rpcCall } from './node-rpc.ts';
import type { TokenMetadata } from './transfers-page.ts';

/**
 * A token's name, symbol and decimals by `eth_call` (node-source.md, "Facts about metadata"), decoded by hand: an
 * ABI `string` is an offset, a length and the bytes; a few old tokens answer a `bytes32` instead. A revert or an
 * empty answer (`0x`) is unknown: null, as the builder source reads an empty value.
 */

/** The 4-byte selectors of the three getters. */
const TOKEN_GETTERS = { name: '0x06fdde03', symbol: '0x95d89b41', decimals: '0x313ce567' } as const;

const HEX_DATA = /^0x(?:[0-9a-fA-F]{2})*$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A `string()` getter's answer as text: an ABI string (UTF-8), or a `bytes32` holding text up to its first zero
 * byte; null for `0x`, an empty text, or bytes that decode to neither. NUL characters are dropped (PostgreSQL text
 * cannot hold them).
 *
 * @example decodeTextResult('0x4d4b52' + '00'.repeat(29)) // → 'MKR'
 * @example decodeTextResult(abiString('Dai Stablecoin')) // → 'Dai Stablecoin'
 */
export function decodeTextResult(result: string): string | null {
  if (!HEX_DATA.test(result)) return null;
  const bytes = Buffer.from(result.slice(2), 'hex');
  let text: Uint8Array | undefined;
  if (bytes.length === 32) {
    const end = bytes.indexOf(0);
    text = bytes.subarray(0, end === -1 ? 32 : end);
  } else if (bytes.length >= 64) {
    const offset = word(bytes, 0);
    const length = offset !== undefined && offset + 32 <= bytes.length ? word(bytes, offset) : undefined;
    if (offset !== undefined && length !== undefined && offset + 32 + length <= bytes.length) text = bytes.subarray(offset + 32, offset + 32 + length);
  }
  if (text === undefined) return null;
  try {
    const decoded = UTF8.decode(text).replaceAll('\u0000', '');
    return decoded === '' ? null : decoded;
  } catch {
    return null;
  }
}

/**
 * A `decimals()` answer: the first 32-byte word as a number from 0 to 255, else null.
 *
 * @example decodeDecimalsResult(`0x${'00'.repeat(31)}12`) // → 18
 */
export function decodeDecimalsResult(result: string): number | null {
  if (!HEX_DATA.test(result) || result.length < 66) return null;
  const value = BigInt(result.slice(0, 66));
  return value <= 255n ? Number(value) : null;
}

/** A 32-byte big-endian word at `at` as a safe integer, or undefined when it is not one. */
function word(bytes: Buffer, at: number): number | undefined {
  if (at + 32 > bytes.length) return undefined;
  const value = BigInt(`0x${bytes.subarray(at, at + 32).toString('hex')}`);
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined;
}

/**
 * `eth_call` of `data` on `contract` at `latest`: the result's hex, or undefined when the call reverted (a
 * JSON-RPC error, as `rpcCall` reads it). Other failures (401, 403, 429, 5xx after the retries) are thrown.
 */
async function callGetter(http: HttpClient, contract: string, data: string): Promise<string | undefined> {
  const outcome = await rpcCall(http, 'eth_call', [{ to: contract, data }, 'latest'], { contract });
  if ('error' in outcome) return undefined;
  if (typeof outcome.result !== 'string' || !HEX_DATA.test(outcome.result)) {
    throw new BadResponseError(`eth_call of ${data} on contract ${contract} answered a malformed result`, [
      `contract ${contract}, result: expected 0x hex bytes, got ${show(outcome.result)}`,
    ]);
  }
  return outcome.result;
}

/**
 * The token's metadata from its getters; a getter that reverts, answers `0x` or answers something unreadable is
 * unknown (null).
 *
 * @example await readTokenMetadata(http, '0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2') // → { contractAddress: '0x9f8f…', name: 'Maker', symbol: 'MKR', decimals: 18 }
 */
export async function readTokenMetadata(http: HttpClient, contract: string): Promise<TokenMetadata> {
  const [name, symbol, decimals] = await Promise.all([
    callGetter(http, contract, TOKEN_GETTERS.name),
    callGetter(http, contract, TOKEN_GETTERS.symbol),
    callGetter(http, contract, TOKEN_GETTERS.decimals),
  ]);
  return {
    contractAddress: contract,
    name: name === undefined ? null : decodeTextResult(name),
    symbol: symbol === undefined ? null : decodeTextResult(symbol),
    decimals: decimals === undefined ? null : decodeDecimalsResult(decimals),
  };
}
