import type { Command } from 'commander';

/**
 * Registers `erc20-etl demo`. Its action imports the demo (`demo-command.ts`) when it runs, so no other command
 * loads the reference server or embedded PostgreSQL.
 */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run a real export against the local reference server into an embedded PostgreSQL (data in .data/)')
    .action(async () => {
      const { runDemo } = await import('./demo-command.ts');
      await runDemo();
    });
}
