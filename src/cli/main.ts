import { Command, CommanderError } from 'commander';
import { EtlError } from '../common/errors.ts';
import { registerDevnet } from './devnet-command.ts';
import { registerExportCommands } from './export-commands.ts';
import { registerDemo } from './demo-registration.ts';
import { packageVersion } from './package-version.ts';
import { registerQueueCommands } from './queue-commands.ts';
import { printable } from '../common/printable.ts';
import { createLogger } from '../common/logger.ts';

/** Exit codes: 0 done; 1 failed; 2 bad usage or configuration; 75 another run holds this job's lock. */
export const EXIT = { ok: 0, failed: 1, usage: 2, locked: 75 } as const;

/** The command line's program; `argv` (as `process.argv`) tells whether help is asked for. */
export function buildProgram(argv: readonly string[] = []): Command {
  const program = new Command('erc20-etl')
    .description('Export ERC20 token transfers from a hosted chain API into PostgreSQL, exactly.')
    .version(packageVersion(), '-V, --version', 'print the version of erc20-etl')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)');
  registerExportCommands(program);
  registerQueueCommands(program);
  registerDevnet(program);
  registerDemo(program);
  refuseRepeatedValues(program, askedForHelp(argv));
  return program;
}

/**
 * A flag that takes one value, given twice (`--to 10 --to 20`), is refused rather than the last taken silently, as
 * a contract listed twice is; repeatable flags (`--contract`) collect their values through a parser of their own.
 */
function refuseRepeatedValues(cmd: Command, help: boolean): void {
  for (const option of cmd.options) {
    if (option.parseArg || !(option.required || option.optional)) continue;
    let given = 0;
    cmd.on(`option:${option.name()}`, () => {
      // the values are not shown: one may be a URL with a password or a key in it; asked for help, help is shown
      if (++given === 2 && !help) {
        cmd.error(`error: ${option.long} is given twice; give it once (only one value can be taken)`, {
          exitCode: EXIT.usage,
          code: 'erc20-etl.repeatedOption',
        });
      }
    });
  }
  for (const sub of cmd.commands) refuseRepeatedValues(sub, help);
}

/** Whether the command line (`process.argv`) asks for help (`-h`, `--help`) anywhere before a lone `--`. */
function askedForHelp(argv: readonly string[]): boolean {
  const args = argv.slice(2);
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/**
 * Node's own warnings (a library's deprecation or security notice, such as pg's on `sslmode=require`) as log lines,
 * JSON under cron like every other line on stderr, instead of Node's bare text of several lines.
 */
function logWarning(warning: Error & { code?: string }): void {
  try {
    createLogger().warn({ msg: warning.message, warning: warning.name, ...(warning.code && { code: warning.code }) });
  } catch {
    // a bad LOG_FORMAT or LOG_LEVEL, which the command itself tells
    process.stderr.write(`erc20-etl: ${warning.name}: ${printable(warning.message)}\n`);
  }
}

/** Runs the command line; resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  // NODE_NO_WARNINGS=1 or --no-warnings keep them quiet, as Node would
  if (process.env['NODE_NO_WARNINGS'] !== '1' && !process.execArgv.includes('--no-warnings')) {
    process.removeAllListeners('warning');
    process.on('warning', logWarning);
  }
  // a reader that stops early (`erc20-etl status | head`) closes the pipe: what is left to print is dropped, the
  // command goes on to its end (a run still commits and records itself), and no stack trace is printed
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
  try {
    await buildProgram(argv).parseAsync([...argv]);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof EtlError) {
      process.stderr.write(`erc20-etl: ${printable(err.message, { lines: true })}\n`);
      return err.exitCode;
    }
    process.stderr.write(`erc20-etl: unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return EXIT.failed;
  }
}
