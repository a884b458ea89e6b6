import type { HeaderJson } from '../eth/header-fields.ts';

/**
 * A dataset (chain-api.md §3): the reference server's input, its dump, and the ground truth tests compare
 * the warehouse with.
 */
/** The key of a transfer: `token_transfers`' primary key. */
export interface TransferKey {
  transactionHash: string;
  logIndex: number;
}

export interface TransferRecord {
  contractAddress: string;
  fromAddress: string;
  toAddress: string;
  /** Decimal integer text, 0 … 2^256−1. Never a JS number. */
  value: string;
  blockHash: string;
  blockNumber: number;
  /** ISO 8601 UTC with milliseconds. */
  blockTimestamp: string;
  transactionHash: string;
  transactionIndex: number;
  logIndex: number;
}

/**
 * Token metadata as `getTokenTransfers` reports it. A line may spell the symbol `contractSymbols`: the
 * server then answers with that spelling for this token, as some hosted services do.
 */
export interface TokenRecord {
  contractAddress: string;
  contractName: string;
  contractSymbol?: string;
  contractSymbols?: string;
  contractDecimals: string;
}

export interface Dataset {
  headers: HeaderJson[];
  transfers: TransferRecord[];
  tokens: TokenRecord[];
}

export const DATASET_FILES = {
  headers: 'headers.jsonl',
  transfers: 'transfers.jsonl',
  tokens: 'tokens.jsonl',
} as const;

/** Field order of a transfer line in a dataset file. */
export const TRANSFER_KEYS = [
  'contractAddress',
  'fromAddress',
  'toAddress',
  'value',
  'blockHash',
  'blockNumber',
  'blockTimestamp',
  'transactionHash',
  'transactionIndex',
  'logIndex',
] as const satisfies readonly (keyof TransferRecord)[];
