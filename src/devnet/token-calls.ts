/**
 * `eth_call` of a token's metadata getters, answered from the dataset's token line (node-source.md):
 * `name()` and `symbol()` as an ABI string (a `bytes32` for the old tokens that answer so, like MKR),
 * `decimals()` as a uint. A value the dataset does not know (`""`, or no line) answers as real tokens do when
 * they lack it: a revert, or `0x`. Which of the two is fixed per token and getter, so both are exercised.
 */
import type { TokenRecord } from '../dataset/types.ts';
import { uint256Word } from './chain-log.ts';

/** The 4-byte selectors of the getters, in the order that decides an unknown value's answer. */
export const TOKEN_SELECTORS = { name: '0x06fdde03', symbol: '0x95d89b41', decimals: '0x313ce567' } as const;
type Getter = keyof typeof TOKEN_SELECTORS;
const GETTERS = Object.keys(TOKEN_SELECTORS) as Getter[];

/** Tokens whose `name()` and `symbol()` return `bytes32` (MKR, SAI): text left-aligned, zero-padded. */
const BYTES32_TOKENS: ReadonlySet<string> = new Set(['0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2', '0x89d24a6b4ccb1b6faa2625fe562bdd9a23260359']);

export type TokenCallAnswer = { result: string } | { reverted: true };

/** What the server knows of the called contract. */
export interface CalledContract {
  /** Its tokens.jsonl line, if it has one. */
  token: TokenRecord | undefined;
  /** Whether it is a contract at all (it has a token line or emits logs); calling anything else answers `0x`. */
  isContract: boolean;
}

/**
 * The answer to `eth_call` of `data` on `to`.
 *
 * @example
 * tokenCallAnswer('0xa0b8…', '0x313ce567', { token: usdc, isContract: true }) // → { result: '0x00…06' }
 * tokenCallAnswer('0xa0b8…', '0x12345678', { token: usdc, isContract: true }) // → { reverted: true } (no such function)
 */
export function tokenCallAnswer(to: string, data: string, contract: CalledContract): TokenCallAnswer {
  if (!contract.isContract) return { result: '0x' };
  const getter = GETTERS.find((g) => data.toLowerCase().startsWith(TOKEN_SELECTORS[g]));
  if (!getter) return { reverted: true };
  const token = contract.token;
  const text = getter === 'name' ? token?.contractName : getter === 'symbol' ? (token?.contractSymbol ?? token?.contractSymbols) : token?.contractDecimals;
  if (text === undefined || text === '' || (getter === 'decimals' && !/^[0-9]{1,78}$/.test(text))) return unknownAnswer(to, getter);
  if (getter === 'decimals') return { result: `0x${uint256Word(text)}` };
  return { result: BYTES32_TOKENS.has(to) ? abiBytes32(text) : abiString(text) };
}

/**
 * A revert or `0x`, by the address's last hex digit and the getter, so that one token's getters differ.
 *
 * @example unknownAnswer('0x…0', 'name') // → { reverted: true }; then symbol → { result: '0x' }, decimals → { reverted: true }
 */
function unknownAnswer(to: string, getter: Getter): TokenCallAnswer {
  const digit = Number.parseInt(to.slice(-1), 16) || 0;
  return (digit + GETTERS.indexOf(getter)) % 2 === 0 ? { reverted: true } : { result: '0x' };
}

/**
 * A `string` return value, ABI-encoded: the offset of the tail (32), the length in bytes, the UTF-8 bytes
 * padded to whole words.
 *
 * @example abiString('DAI') // → '0x' + '…20' + '…03' + '444149' padded with zeros to 32 bytes
 */
export function abiString(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  const padded = Buffer.alloc(Math.ceil(bytes.length / 32) * 32);
  bytes.copy(padded);
  return `0x${uint256Word(32)}${uint256Word(bytes.length)}${padded.toString('hex')}`;
}

/**
 * A `bytes32` return value holding text: its UTF-8 bytes (at most 32), then zeros.
 *
 * @example abiBytes32('MKR') // → '0x4d4b52' + 29 zero bytes
 */
export function abiBytes32(text: string): string {
  const word = Buffer.alloc(32);
  Buffer.from(text, 'utf8').copy(word, 0, 0, 32);
  return `0x${word.toString('hex')}`;
}
