import type cliProgress from 'cli-progress';
import type { Logger } from 'pino';
import type { TerminalLines } from '../common/logger.ts';
import type { Progress } from '../pipeline/progress.ts';

/** ANSI: erase from the cursor to the end of the screen. */
const ERASE_BELOW = '\x1b[0J';

/**
 * A bar per contract on a terminal (blocks covered, rows, rows/s, ETA), with the log's lines (`terminal`)
 * printed above the bars while they are drawn; elsewhere a JSON log line per contract every `everyMs`, so
 * cron mail and log collectors get facts, not escape codes. The bars' library is loaded only for a terminal.
 */
export async function createProgress(options: { tty: boolean; logger: Logger; job: string; terminal?: TerminalLines; everyMs?: number; now?: () => number }): Promise<Progress> {
  const now = options.now ?? (() => performance.now());
  const state = new Map<string, { label: string; total: number; blocks: number; rows: number; started: number; loggedAt: number }>();
  if (options.tty) {
    const { default: library } = await import('cli-progress');
    const bars = new library.MultiBar(
      {
        format: ' {label} |{bar}| {percentage}% blocks | {rows} rows | {rate} rows/s | ETA {eta_formatted}',
        hideCursor: true,
        clearOnComplete: false,
        // redraw every time: log lines printed above the bars erase them, and an unchanged bar would not be drawn again
        forceRedraw: true,
        stream: process.stderr,
      },
      library.Presets.shades_classic,
    );
    const byContract = new Map<string, cliProgress.SingleBar>();
    // printed where the bars were (erase below the cursor first: a line of several lines would leave bits of bars), then the bars again
    options.terminal?.divert((text) => bars.log(`${ERASE_BELOW}${text}`));
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
      stop: () => {
        bars.update(); // prints the log lines written since the last redraw
        options.terminal?.divert(undefined);
        bars.stop();
      },
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
