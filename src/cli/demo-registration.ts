import type { Command } from 'commander';

/**
 * Registers `erc20-etl demo`. Its action imports the demo (`demo-command.ts`) when it runs, so no other command
 * loads the reference server or embedded PostgreSQL.
 */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run a real export against the local reference server into an embedded PostgreSQL (data in .data/; as root, in the temporary folder)')
    .option('--keep', 'leave PostgreSQL running afterwards and print a psql command line to query it, until Ctrl-C')
    .option('--clean', "remove the demo's data (and, as root, its copy of the PostgreSQL binaries) instead of running it")
    .action(async (options: { keep?: boolean; clean?: boolean }) => {
      const { cleanDemo, runDemo } = await import('./demo-command.ts');
      if (options.clean) await cleanDemo();
      else await runDemo({ keep: Boolean(options.keep) });
    });
}
