import { rename, rm, writeFile } from 'node:fs/promises';
import { ConfigError, FatalError } from '../common/errors.ts';
import { createLogger } from '../common/logger.ts';
import { checkAll } from '../config/check-all.ts';
import { resolveSettings } from '../config/settings.ts';
import { readReportData } from '../report/report-data.ts';
import { reportPage } from '../report/report-page.ts';
import { createWarehouse, describeConnectionError } from '../warehouse/db.ts';
import { ensureMigrated } from './exporter.ts';
import type { ConnectionFlags } from './connection-flags.ts';

export interface ReportFlags {
  out?: string;
  days?: string;
  runs?: string;
}

/** A positive whole number from a flag, or a usage error naming it. */
function count(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^[1-9]\d{0,5}$/.test(text)) throw new ConfigError(`--${flag}: expected a whole number from 1 to 999999, got ${JSON.stringify(text)}.`);
  return Number(text);
}

/**
 * `erc20-etl report --out report.html [--days N] [--runs N]`: writes one self-contained HTML page with
 * charts of the warehouse (daily transfers and volume per token, coverage per contract, recent runs).
 * The file is written whole or not at all.
 */
export async function writeReport(flags: ConnectionFlags & ReportFlags): Promise<void> {
  const [out, days, runs, settings] = await checkAll([
    () => {
      if (!flags.out) throw new ConfigError('report: --out FILE is required: where to write the HTML page (e.g. --out report.html).');
      return flags.out;
    },
    () => count('days', flags.days, 90),
    () => count('runs', flags.runs, 30),
    () => resolveSettings({ flags, env: process.env, needs: { database: true, api: false } }),
  ]);
  const warehouse = createWarehouse({ databaseUrl: settings.databaseUrl!, logger: createLogger(), maxConnections: 2 });
  try {
    // an unmigrated warehouse is told to migrate, not shown a missing relation
    await ensureMigrated(warehouse);
    const data = await readReportData(warehouse.db, { days, runs, now: new Date() }).catch((err: unknown) => {
      throw describeConnectionError(err);
    });
    const partial = `${out}.partial`;
    try {
      await writeFile(partial, reportPage(data));
      await rename(partial, out);
    } catch (err) {
      // nothing half-written is left beside it
      await rm(partial, { force: true }).catch(() => undefined);
      throw new FatalError(`report: could not write ${out} (${(err as Error).message}). Check that its folder exists and is writable.`);
    }
    const tokens = new Set(data.daily.map((d) => d.token)).size;
    process.stdout.write(
      `erc20-etl report: wrote ${out} (${data.daily.length} token-days of ${tokens} token(s), ${data.coverage.length} covered span(s), ${data.runs.length} run(s))\n`,
    );
  } finally {
    await warehouse.close();
  }
}
