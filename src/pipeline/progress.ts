/**
 * What a run reports while it works: per contract, blocks covered and rows loaded. The pipeline sees only this;
 * how it is shown (bars on a terminal, log lines elsewhere) is the command line's (src/cli/progress-bars.ts).
 */
export interface Progress {
  start(contract: string, label: string, blocks: number): void;
  advance(contract: string, blocks: number, rows: number): void;
  stop(): void;
}
