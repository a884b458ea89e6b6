import type { Warehouse } from '../warehouse/db.ts';
import { readQueueStatus, type QueueStatus } from '../warehouse/queue-status.ts';
import { chunkJobKey, TASK_PREFIX } from './payloads.ts';

export type { QueueStatus };

/**
 * What the task queue holds for `enqueue` and `worker` (this tool's tasks, of every chain), or undefined when the queue was
 * never installed (no `erc20-etl migrate` since workers came to this version).
 */
export function queueStatus(db: Warehouse['db']): Promise<QueueStatus | undefined> {
  return readQueueStatus(db, { prefix: TASK_PREFIX, chunkKeyPrefix: chunkJobKey('') });
}
