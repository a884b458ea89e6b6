import { show } from '../dataset/validate.ts';
import { replacedEthereumFields, verifyChainHeader, type HeaderVerdict } from '../eth/chain-rules.ts';
import { CONSENSUS_FIELDS, fieldExpectation, FORK_KEYS, isFieldHex, toErigonHeader, unknownHeaderKeys, type FieldKind, type HeaderJson } from '../eth/header-fields.ts';
import { isHexQuantity } from '../eth/hex.ts';
import { BadResponseError } from './errors.ts';

/** A header that passed `checkHeader`. */
export interface CheckedHeader {
  /** Erigon's key set; a fork field the block predates is null, and so are fields its chain has others in place of (AuRa's `mixHash`, `nonce`). */
  header: HeaderJson;
  /** Keys outside Erigon's key set (a family's `step`, `extDataHash`, `l1BlockNumber`; newer `slotNumber`, …), or null when none. */
  extra: Record<string, unknown> | null;
  /** Whether the fields hash to the block hash by the chain's rule (`chain-rules.ts`). */
  hashVerified: boolean;
  /**
   * Why the hash could not be verified (the chain has no rule this exporter knows, or the header has fields its
   * rule does not know and does not hash by it); null when it was verified.
   */
  unverifiedReason: string | null;
}

/** What the transfers said about the block. */
export interface ExpectedHeader {
  hash: string;
  number: number;
  /** ISO 8601 UTC, as in the transfers. */
  timestamp: string;
  /** The contracts whose transfers point at the block, named in messages when given. */
  contracts?: readonly string[];
  /** The method that answered the header, named in messages (`erigon_getHeaderByHash` when not given: the builder API's). */
  method?: string;
}

const FORK_KEY_SET = new Set<string>(FORK_KEYS);

/**
 * Checks a header of chain `chainId` (from `erigon_getHeaderByHash` or `eth_getBlockByHash`) against the block
 * the transfers named: every field's shape (fields the chain's header has others in place of, AuRa's `mixHash`
 * and `nonce`, may be missing: null), the hash asked for, the number and timestamp of the transfers, and that the
 * fields hash to it by the chain's rule (`verifyChainHeader`; unless `hashVerifiedBefore`: this very object's
 * hash was verified already, `createHeaderChecker`).
 * Throws one BadResponseError naming the block (and the contracts, when `expected` lists them) and every bad
 * field, or the rule the header fails. A header that cannot be verified (a chain without a known rule; or
 * fields its rule does not know, with a hash that does not match) passes with `hashVerified: false` and the reason.
 *
 * @example
 * checkHeader(1, raw, { hash: '0xd4e5…8fa3', number: 0, timestamp: '1970-01-01T00:00:00.000Z' })
 * // → { header: { number: '0x0', hash: '0xd4e5…8fa3', baseFeePerGas: null, … }, extra: null, hashVerified: true, unverifiedReason: null }
 */
export function checkHeader(chainId: number, raw: unknown, expected: ExpectedHeader, hashVerifiedBefore = false): CheckedHeader {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw badHeader(expected, [`header: expected a JSON object, got ${show(raw)}`]);
  }
  const input = raw as Record<string, unknown>;
  const problems: string[] = [];
  const replaced = replacedEthereumFields(chainId, input);

  for (const { key, kind } of CONSENSUS_FIELDS) {
    const value = input[key];
    if ((value === null || value === undefined) && (FORK_KEY_SET.has(key) || replaced.includes(key))) continue;
    const problem = fieldProblem(kind, value);
    if (problem) problems.push(`header.${key}: ${problem}`);
  }
  const hashProblem = fieldProblem('hash', input.hash);
  if (hashProblem) problems.push(`header.hash: ${hashProblem}`);
  else if ((input.hash as string).toLowerCase() !== expected.hash.toLowerCase()) {
    problems.push(`header.hash: expected the hash asked for, ${expected.hash}, got ${show(input.hash)}`);
  }

  if (typeof input.number === 'string' && isHexQuantity(input.number) && BigInt(input.number) !== BigInt(expected.number)) {
    problems.push(`header.number: expected ${expected.number} (the block of the transfers), got ${input.number} (${BigInt(input.number)})`);
  }
  const expectedSeconds = Math.floor(Date.parse(expected.timestamp) / 1000);
  if (Number.isNaN(expectedSeconds)) {
    problems.push(`header.timestamp: cannot be compared: the transfers' block time ${show(expected.timestamp)} is not an ISO 8601 date`);
  } else if (typeof input.timestamp === 'string' && isHexQuantity(input.timestamp) && BigInt(input.timestamp) !== BigInt(expectedSeconds)) {
    const got = Number(BigInt(input.timestamp));
    const gotIso = Number.isSafeInteger(got * 1000) ? new Date(got * 1000).toISOString() : 'out of range';
    problems.push(`header.timestamp: expected ${expected.timestamp} (the transfers' block time), got ${input.timestamp} (${gotIso})`);
  }
  if (problems.length) throw badHeader(expected, problems);

  const header = toErigonHeader(input, replaced);
  const unknown = unknownHeaderKeys(input);
  const extra = unknown.length ? Object.fromEntries(unknown.map((k) => [k, input[k]])) : null;
  if (hashVerifiedBefore) return { header, extra, hashVerified: true, unverifiedReason: null };
  const verdict = verifyChainHeader(chainId, input);
  if (verdict.verified) return { header, extra, hashVerified: true, unverifiedReason: null };
  if (verdict.failed) throw badHeader(expected, [ruleProblem(chainId, verdict, expected)]);
  return { header, extra, hashVerified: false, unverifiedReason: verdict.reason };
}

/** A header that fails its chain's rule, as a problem of `badHeader`: the field that cannot be encoded, or the hash its fields give. */
function ruleProblem(chainId: number, verdict: Extract<HeaderVerdict, { failed: true }>, expected: ExpectedHeader): string {
  if (verdict.field) return `header.${verdict.field.key}: ${verdict.field.message}`;
  if (verdict.computed) {
    return `header: keccak256 of its RLP fields is ${verdict.computed}, not the block hash ${expected.hash} (chain ${chainId}'s ${verdict.rule} rule): a field was altered`;
  }
  return `header: ${verdict.reason}`;
}

/** `checkHeader` for one chain, remembering what passed: a header object whose hash it verified costs no hashing when checked again, and against the same block nothing. */
export type HeaderChecker = (raw: unknown, expected: ExpectedHeader) => CheckedHeader;

/** What a remembered header object passed: the block it was checked against (`ExpectedHeader`'s hash, number and time), and the answer. */
interface Passed {
  hash: string;
  number: number;
  timestamp: string;
  checked: CheckedHeader;
}

/**
 * A `checkHeader` of chain `chainId` that remembers each header object that passed (held weakly: forgotten with the
 * object), with the block it last passed against. A source that keeps the headers it fetched (the node source) checks
 * each block once for its rows' times; the pipeline's check of the same object against the same block (hash, number
 * and time, as the same text) gets the same answer without reading a field; against another block it checks every
 * field again, and hashes nothing when the hash was verified. (Objects are never changed after parsing: the same
 * object is the same fields. The contracts and method of `expected` only word a failure, and failures are not
 * remembered.)
 *
 * @example
 * const check = createHeaderChecker(1);
 * check(raw, { hash, number, timestamp }); // checks the fields and hashes them
 * check(raw, { hash, number, timestamp }); // the same answer, nothing checked again
 * check(raw, { hash, number: number + 1, timestamp }); // the fields' shapes, the hash asked for, number and time (it fails); no hashing
 */
export function createHeaderChecker(chainId: number): HeaderChecker {
  const passed = new WeakMap<object, Passed>();
  return (raw, expected) => {
    const before = raw !== null && typeof raw === 'object' ? passed.get(raw) : undefined;
    if (before !== undefined && before.hash === expected.hash && before.number === expected.number && before.timestamp === expected.timestamp) return before.checked;
    const checked = checkHeader(chainId, raw, expected, before?.checked.hashVerified === true);
    passed.set(raw as object, { hash: expected.hash, number: expected.number, timestamp: expected.timestamp, checked });
    return checked;
  };
}

/**
 * The error for a header that failed: each problem (`header.gasUsed: …`) after the block it is about, and the
 * contracts whose transfers point at it. Written only on failure, since a check runs once per block.
 */
function badHeader(expected: ExpectedHeader, problems: readonly string[]): BadResponseError {
  const contracts = expected.contracts?.length ? `contract${expected.contracts.length > 1 ? 's' : ''} ${expected.contracts.join(', ')}, ` : '';
  const block = `${contracts}block ${expected.number} (${expected.hash})`;
  return new BadResponseError(
    `${expected.method ?? 'erigon_getHeaderByHash'} answered a bad header for ${block}`,
    problems.map((p) => `${block}, ${p}`),
  );
}

function fieldProblem(kind: FieldKind, value: unknown): string | undefined {
  if (typeof value !== 'string') return `expected 0x hex text, got ${show(value)}`;
  return isFieldHex(kind, value) ? undefined : `expected ${fieldExpectation(kind)}, got ${show(value)}`;
}
