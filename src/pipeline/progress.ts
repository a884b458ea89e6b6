import cliProgress from 'cli-progress';
import type { Logger } from 'pino';

/** What a run reports while it works: per contract, blocks covered and rows loaded. */
export interface Progress {
  start(contract: string, label: string, blocks: number): void;
  advance(contract: string, blocks: number, rows: number): void;
  stop(): void;
}

/**
 * A bar per contract on a terminal (blocks covered, rows, rows/s, ETA); elsewhere a JSON log line per
 * contract every `everyMs`, so cron mail and log collectors get facts, not escape codes.
 */
export function createProgress(options: { tty: boolean; logger: Logger; job: string; everyMs?: number; now?: () => number }): Progress {
  const now = options.now ?? (() => performance.now());
  const state = new Map<string, { label: string; total: number; blocks: number; rows: number; started: number; loggedAt: number }>();
  if (options.tty) {
    const bars = new cliProgress.MultiBar(
      {
        format: ' {label} |{bar}| {percentage}% blocks | {rows} rows | {rate} rows/s | ETA {eta_formatted}',
        hideCursor: true,
        clearOnComplete: false,
        stream: process.stderr,
      },
      cliProgress.Presets.shades_classic,
    );
    const byContract = new Map<string, cliProgress.SingleBar>();
    return {
      start(contract, label, blocks) {
        state.set(contract, { label, total: blocks, blocks: 0, rows: 0, started: now(), loggedAt: now() });
        byContract.set(contract, bars.create(Math.max(blocks, 1), 0, { label, rows: 0, rate: 0 }));
      },
      advance(contract, blocks, rows) {
        const s = state.get(contract);
        if (!s) return;
        s.blocks += blocks;
        s.rows += rows;
        const seconds = Math.max((now() - s.started) / 1000, 0.001);
        byContract.get(contract)?.update(s.blocks, { label: s.label, rows: s.rows, rate: Math.round(s.rows / seconds) });
      },
      stop: () => bars.stop(),
    };
  }
  const every = options.everyMs ?? 10_000;
  const log = (contract: string, final: boolean) => {
    const s = state.get(contract);
    if (!s) return;
    const ms = Math.round(now() - s.started);
    options.logger.info({ msg: final ? 'contract read' : 'progress', job: options.job, contract, blocks: s.blocks, totalBlocks: s.total, rows: s.rows, ms });
  };
  return {
    start(contract, label, blocks) {
      state.set(contract, { label, total: blocks, blocks: 0, rows: 0, started: now(), loggedAt: now() });
    },
    advance(contract, blocks, rows) {
      const s = state.get(contract);
      if (!s) return;
      s.blocks += blocks;
      s.rows += rows;
      if (now() - s.loggedAt >= every) {
        s.loggedAt = now();
        log(contract, false);
      }
    },
    stop() {
      for (const contract of state.keys()) log(contract, true);
    },
  };
}
