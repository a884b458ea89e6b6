import { isHexText } from '../eth/hex.ts';
import type { TransferRecord } from './types.ts';

/**
 * Field checks shared by everything that reads transfers or token metadata: the dataset reader, the
 * reference server's ingest and (later) the exporter's page validation. Each returns an error text or
 * `undefined`, so callers can collect every problem of a record at once.
 */

export const MAX_UINT256 = (1n << 256n) - 1n;

const LOWER = { lower: true } as const;
const DECIMAL = /^(?:0|[1-9][0-9]*)$/;
const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function checkAddress(value: unknown): string | undefined {
  return typeof value === 'string' && isHexText(value, 40, LOWER) ? undefined : `expected a lower-case 0x address of 40 hex digits, got ${show(value)}`;
}

export function checkHash(value: unknown): string | undefined {
  return typeof value === 'string' && isHexText(value, 64, LOWER) ? undefined : `expected a lower-case 0x hash of 64 hex digits, got ${show(value)}`;
}

export function checkUint256Text(value: unknown): string | undefined {
  // up to 77 digits is below 10^77 < 2^256: only a 78-digit value needs comparing (a million rows a minute pass here)
  if (typeof value !== 'string' || !DECIMAL.test(value) || value.length > 78 || (value.length === 78 && BigInt(value) > MAX_UINT256)) {
    return `expected decimal integer text from 0 to 2^256-1, got ${show(value)}`;
  }
  return undefined;
}

export function checkIndex(value: unknown): string | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? undefined : `expected a non-negative integer, got ${show(value)}`;
}

export function checkIsoTimestamp(value: unknown): string | undefined {
  return typeof value === 'string' && ISO_MILLIS.test(value) && !Number.isNaN(Date.parse(value))
    ? undefined
    : `expected an ISO 8601 UTC timestamp with milliseconds like 2023-04-08T21:26:11.000Z, got ${show(value)}`;
}

/** A value for an error message: JSON, cut to a readable length. */
export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = typeof value === 'bigint' ? value.toString() : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Every field of a transfer with its check, in dataset order: what a dataset line and an API row must satisfy. */
export const TRANSFER_FIELD_CHECKS = [
  ['contractAddress', checkAddress],
  ['fromAddress', checkAddress],
  ['toAddress', checkAddress],
  ['value', checkUint256Text],
  ['blockHash', checkHash],
  ['blockNumber', checkIndex],
  ['blockTimestamp', checkIsoTimestamp],
  ['transactionHash', checkHash],
  ['transactionIndex', checkIndex],
  ['logIndex', checkIndex],
] as const satisfies readonly (readonly [keyof TransferRecord, (value: unknown) => string | undefined])[];
