import { Gauge, type Registry } from 'prom-client';

/**
 * What the queue gauges read: the part of the queue's status (`queueStatus` of src/queue/queue-status.ts gives
 * it) that they show. Declared here, as metrics import neither the queue nor the warehouse.
 */
export interface QueueReading {
  /** Tasks waiting for a worker, those waiting to be retried included. */
  waiting: number;
  /** Tasks a worker holds now. */
  running: number;
  /** Tasks that used up their attempts. */
  givenUp: number;
  /** Worker processes heard from in the last minute. */
  workers: readonly unknown[];
}

/**
 * Gauges of the task queue, read from PostgreSQL at each scrape: tasks by state, and the worker processes
 * heard from in the last minute. A worker serves them, so an operator sees a queue that no one empties.
 *
 * @example trackQueue(metrics.registry, () => queueStatus(warehouse.db)); // erc20_etl_queue_tasks{state="waiting"} 3
 */
export function trackQueue(registry: Registry, read: () => Promise<QueueReading | undefined>): void {
  let last: Promise<QueueReading | undefined> | undefined;
  // both gauges of one scrape share one read
  const status = () => (last ??= read().finally(() => setTimeout(() => (last = undefined), 100).unref()));
  new Gauge({
    name: 'erc20_etl_queue_tasks',
    help: 'Tasks on the queue by state: waiting (retries included), running, given_up (the next enqueue queues them afresh).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const q = await status().catch(() => undefined);
      if (!q) return;
      this.set({ state: 'waiting' }, q.waiting);
      this.set({ state: 'running' }, q.running);
      this.set({ state: 'given_up' }, q.givenUp);
    },
  });
  new Gauge({
    name: 'erc20_etl_workers',
    help: 'Worker processes heard from in the last minute, on this warehouse.',
    registers: [registry],
    async collect() {
      const q = await status().catch(() => undefined);
      if (q) this.set(q.workers.length);
    },
  });
}
