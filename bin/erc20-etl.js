#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so a fresh `npm ci` is all a clone needs.
import { register } from 'tsx/esm/api';

register();
// The command line may hold a credential (`--api-url https://…/<project-id>`): keep it out of the process
// title that `ps` and /proc show to every user of the machine.
process.title = 'erc20-etl';
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv);
