import { parseArgs } from 'node:util';
import { cpus, totalmem } from 'node:os';
import { benchDevnet } from './devnet-bench.ts';

/**
 * `npm run bench [-- --json] [-- --transfers N]`: prints the figures of the speed and memory targets,
 * each measured in this one run. Never part of `npm test`: machines here are noisy.
 */
const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    transfers: { type: 'string', default: '1000000' },
    streams: { type: 'string', default: '4' },
  },
});
const transfers = Number(values.transfers);
const devnet = await benchDevnet({ transfers, blocks: Math.max(1000, Math.round(transfers / 10)), tokens: 3, streams: Number(values.streams) });
const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const figures = { machine, devnet };

if (values.json) {
  process.stdout.write(`${JSON.stringify(figures)}\n`);
} else {
  const rows: [string, string, string][] = [
    ['reference server: transfers served / s (1000-row pages)', fmt(devnet.transfersPerSecond), '≥ 200,000'],
    ['reference server: header lookups / s (batches of 100)', fmt(devnet.headerLookupsPerSecondBatched), '≥ 5,000'],
    ['reference server: header lookups / s (one per request)', fmt(devnet.headerLookupsPerSecondSingle), ''],
    [`reference server: peak RSS with ${fmt(devnet.transfers)} transfers (MB)`, fmt(devnet.serverPeakRssMb), '< 1,024'],
    ['reference server: start-up incl. generation (s)', devnet.startupSeconds.toFixed(1), ''],
  ];
  const w = Math.max(...rows.map((r) => r[0].length));
  process.stdout.write(`machine: ${machine}\n\n${'figure'.padEnd(w)}  ${'measured'.padStart(12)}  target\n`);
  for (const [name, value, target] of rows) process.stdout.write(`${name.padEnd(w)}  ${value.padStart(12)}  ${target}\n`);
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
