/** A transfer record put together from what it moves, its block and its log position: as the synthetic chain and a reorg's new fork make them. */
import type { TransferRecord } from '../dataset/types.ts';

/** A block as its transfers carry it. */
export interface BlockRef {
  number: number;
  hash: string;
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string;
}

/** What a transfer moves, whichever block and transaction hold it. */
export type TransferParts = Pick<TransferRecord, 'contractAddress' | 'fromAddress' | 'toAddress' | 'value'>;

/** Where a transfer's log stands in its block. */
export type LogPosition = Pick<TransferRecord, 'transactionHash' | 'transactionIndex' | 'logIndex'>;

/**
 * The record of transfer `parts` in `block` at `position`, its fields in dataset line order. Takes only the four
 * parts from `parts`, whatever else it carries (an old record moved to another block, say).
 */
export function blockTransfer(parts: TransferParts, block: BlockRef, position: LogPosition): TransferRecord {
  return {
    contractAddress: parts.contractAddress,
    fromAddress: parts.fromAddress,
    toAddress: parts.toAddress,
    value: parts.value,
    blockHash: block.hash,
    blockNumber: block.number,
    blockTimestamp: block.timestamp,
    transactionHash: position.transactionHash,
    transactionIndex: position.transactionIndex,
    logIndex: position.logIndex,
  };
}
