import { show } from '../dataset/validate.ts';
import { CONSENSUS_FIELDS, fieldExpectation, FORK_KEYS, isFieldHex, toErigonHeader, unknownHeaderKeys, type FieldKind, type HeaderJson } from '../eth/header-fields.ts';
import { HeaderEncodingError, verifyHeaderHash } from '../eth/header-hash.ts';
import { isHexQuantity } from '../eth/hex.ts';
import { BadResponseError } from './errors.ts';

/** A header that passed `checkHeader`. */
export interface CheckedHeader {
  /** Erigon's key set; a fork field the block predates is null. */
  header: HeaderJson;
  /** Keys outside Erigon's key set (older Erigon's `AuRaStep`, newer `slotNumber`, …), or null when none. */
  extra: Record<string, unknown> | null;
  /** Whether keccak256(RLP) of the fields equals the hash; false only when `extra` holds fields we cannot encode. */
  hashVerified: boolean;
}

/** What the transfers said about the block. */
export interface ExpectedHeader {
  hash: string;
  number: number;
  /** ISO 8601 UTC, as in the transfers. */
  timestamp: string;
  /** The contracts whose transfers point at the block, named in messages when given. */
  contracts?: readonly string[];
}

const FORK_KEY_SET = new Set<string>(FORK_KEYS);

/**
 * Checks a header from `erigon_getHeaderByHash` against the block the transfers named: every field's
 * shape, the hash asked for, the number and timestamp of the transfers, and keccak256(RLP) = hash (unless
 * `hashVerifiedBefore`: this very object's hash was verified already, `createHeaderChecker`).
 * Throws one BadResponseError naming the block (and the contracts, when `expected` lists them) and every
 * bad field. When the header carries unknown keys (possibly consensus fields this tool cannot encode) a hash
 * mismatch is tolerated: `hashVerified: false`.
 *
 * @example
 * checkHeader(raw, { hash: '0xd4e5…8fa3', number: 0, timestamp: '1970-01-01T00:00:00.000Z' })
 * // → { header: { number: '0x0', hash: '0xd4e5…8fa3', baseFeePerGas: null, … }, extra: null, hashVerified: true }
 */
export function checkHeader(raw: unknown, expected: ExpectedHeader, hashVerifiedBefore = false): CheckedHeader {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw badHeader(expected, [`header: expected a JSON object, got ${show(raw)}`]);
  }
  const input = raw as Record<string, unknown>;
  const problems: string[] = [];

  for (const { key, kind } of CONSENSUS_FIELDS) {
    const value = input[key];
    if ((value === null || value === undefined) && FORK_KEY_SET.has(key)) continue;
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

  const header = toErigonHeader(input);
  const unknown = unknownHeaderKeys(input);
  const extra = unknown.length ? Object.fromEntries(unknown.map((k) => [k, input[k]])) : null;
  if (hashVerifiedBefore) return { header, extra, hashVerified: true };
  let verified: { ok: boolean; computed: string };
  try {
    verified = verifyHeaderHash(header, expected.hash);
  } catch (err) {
    if (!(err instanceof HeaderEncodingError)) throw err;
    throw badHeader(expected, [`header.${err.field}: ${err.message}`]);
  }
  if (!verified.ok && !extra) {
    throw badHeader(expected, [`header: keccak256 of its RLP fields is ${verified.computed}, not the block hash ${expected.hash}: a field was altered`]);
  }
  return { header, extra, hashVerified: verified.ok };
}

/** `checkHeader`, remembering what passed: the same header object checked again against the same block costs no hashing. */
export type HeaderChecker = (raw: unknown, expected: ExpectedHeader) => CheckedHeader;

/**
 * A `checkHeader` that remembers each header object whose hash it verified (held weakly: forgotten with the
 * object). A source that keeps the headers it fetched (the node source) checks each block once for its rows'
 * times, and the pipeline's check of the same object checks every field again but hashes nothing. (Objects
 * are never changed after parsing: the same object is the same fields.)
 *
 * @example
 * const check = createHeaderChecker();
 * check(raw, { hash, number, timestamp }); // hashes the fields
 * check(raw, { hash, number, timestamp }); // the fields' shapes, the hash asked for, number and time; no hashing
 */
export function createHeaderChecker(): HeaderChecker {
  const verified = new WeakSet<object>();
  return (raw, expected) => {
    const before = raw !== null && typeof raw === 'object' && verified.has(raw);
    const checked = checkHeader(raw, expected, before);
    if (checked.hashVerified) verified.add(raw as object);
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
    `erigon_getHeaderByHash answered a bad header for ${block}`,
    problems.map((p) => `${block}, ${p}`),
  );
}

function fieldProblem(kind: FieldKind, value: unknown): string | undefined {
  if (typeof value !== 'string') return `expected 0x hex text, got ${show(value)}`;
  return isFieldHex(kind, value) ? undefined : `expected ${fieldExpectation(kind)}, got ${show(value)}`;
}
