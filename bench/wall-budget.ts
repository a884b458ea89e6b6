import type { BudgetReport } from '../src/common/time-budget.ts';

/** One part of a first load's wall time, as the bench prints it. */
export interface WallPart {
  part: string;
  seconds: number;
  /** seconds ÷ the process's wall time. */
  share: number;
}

/** The names the bench prints for the exporter's own parts (`--time-budget`), in its order. */
const PART_NAMES: Record<keyof BudgetReport['seconds'], string> = {
  parse: 'parsing and validating',
  copy: 'COPY / merge',
  commit: 'commits and ledgers',
  headers: 'header fetch and insert',
  api: 'waiting on the API',
  other: 'other (planning, locks, metadata)',
};

/**
 * Where a process's wall time went: start-up (spawn → the exporter's budget opens), the exporter's own parts
 * (`--time-budget`), shutdown (the report → exit). Each with its share of the wall time; they add up to it. Pure.
 *
 * @example wallBudget(1000, 5000, { startedAt: 1400, endedAt: 4900, seconds: { parse: 1, copy: 2, commit: 0.2, headers: 0.1, api: 0.1, other: 0.1 } })
 * // → [{ part: 'process start-up', seconds: 0.4, share: 0.1 }, { part: 'parsing and validating', seconds: 1, share: 0.25 }, …, { part: 'shutdown', seconds: 0.1, share: 0.025 }]
 */
export function wallBudget(spawnedAt: number, exitedAt: number, report: BudgetReport): WallPart[] {
  const wall = (exitedAt - spawnedAt) / 1000;
  const parts: [string, number][] = [
    ['process start-up', Math.max(0, report.startedAt - spawnedAt) / 1000],
    ...(Object.keys(PART_NAMES) as (keyof BudgetReport['seconds'])[]).map((k): [string, number] => [PART_NAMES[k], report.seconds[k] ?? 0]),
    ['shutdown', Math.max(0, exitedAt - report.endedAt) / 1000],
  ];
  return parts.map(([part, seconds]) => ({ part, seconds, share: wall > 0 ? seconds / wall : 0 }));
}
