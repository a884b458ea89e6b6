import type { Command } from 'commander';
import { DEFAULT_LOGS_ERROR_STYLE, LOGS_ERROR_STYLES } from '../devnet/logs-limit-errors.ts';
import { SYNTHETIC_DEFAULTS } from '../devnet/synthetic.ts';
import type { DevnetFlags } from './devnet-options.ts';

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

function generationOptions(cmd: Command): Command {
  const d = SYNTHETIC_DEFAULTS;
  return cmd
    .option('--seed <n>', `seed of the synthetic chain and of fault decisions (default ${d.seed})`)
    .option('--blocks <n>', `synthetic chain length (default ${d.blocks})`)
    .option('--tokens <n>', `number of token contracts (default ${d.tokens})`)
    .option('--transfers <n>', `number of transfers (default ${d.transfers})`)
    .option('--start-block <n>', `first block number (default ${d.startBlock})`)
    .option('--amounts <profile>', 'transfer values: edge-cases (0 and 2^256-1 among plausible amounts, for tests) or realistic (0.01 to 1,000,000 tokens) (default edge-cases)');
}

/**
 * `erc20-etl devnet …` serves the reference API; `erc20-etl devnet dump --out DIR` writes a synthetic chain as a
 * dataset. Each action imports its implementation when it runs, so the exporter's commands never load the server.
 */
export function registerDevnet(program: Command): void {
  const devnet = generationOptions(
    program
      .command('devnet')
      .description('run the local reference server of the chain API (a synthetic chain, or --dataset DIR)')
      .option('--dataset <dir>', 'serve this dataset folder (headers.jsonl, transfers.jsonl, tokens.jsonl)'),
  )
    .option('--port <n>', 'port to listen on; 0 picks a free one', '8545')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--project-id <id>', 'accepted project id (repeatable; default demo)', collect)
    .option('--chain-id <n>', 'chain id answered by eth_chainId', '1')
    .option('--no-erigon', 'erigon_* methods answer -32601 method not found, as on geth, reth and most providers')
    .option('--logs-max-range <n>', "most blocks one eth_getLogs may cover, then the error style's refusal (0: no limit)", '0')
    .option('--logs-max-results <n>', "most logs one eth_getLogs may answer, then the error style's refusal (0: no limit)", '0')
    .option('--logs-error-style <provider>', `how eth_getLogs over a cap is refused (code, message, hint): ${LOGS_ERROR_STYLES.join(', ')} (default ${DEFAULT_LOGS_ERROR_STYLE})`)
    .option('--latency-ms <a[-b]>', 'fault: delay every request by A ms, or uniformly A to B ms')
    .option('--rate-limit <rps>', 'fault: requests per second per project id, then 429 with Retry-After')
    .option('--rpc-batch-limit <n>', 'most JSON-RPC calls in one batch; larger batches get HTTP 400, -32600 (default 1000; Erigon: 100)')
    .option('--fail-rate <p>', 'fault: probability of a 500, 502 or 503')
    .option('--reset-rate <p>', 'fault: probability of a socket destroyed mid-response')
    .option('--truncate-rate <p>', 'fault: probability of a body cut short')
    .option('--header-lag-rate <p>', 'fault: probability that a block hash is not found the first time it is asked for')
    .option('--logs-hang-rate <p>', 'fault: probability that an eth_getLogs over more than one block is never answered (the socket stays open)')
    .option('--quota <n>', 'getTokenTransfers requests per project id before 403 plan capacity exceeded')
    .option('--page-key-ttl <seconds>', 'how long a nextPageKey stays valid', '86400')
    .option('--fault-seed <n>', 'seed of fault decisions and reorg forks (default: --seed)')
    .action(async (flags: DevnetFlags) => {
      const { serveDevnet } = await import('./devnet-serve.ts');
      await serveDevnet(flags);
    });

  generationOptions(
    devnet
      .command('dump')
      .description('write the synthetic chain as a dataset folder: the ground truth for any test')
      .requiredOption('--out <dir>', 'folder to write headers.jsonl, transfers.jsonl and tokens.jsonl into'),
  ).action(async (_flags: unknown, cmd: Command) => {
    // generation flags may stand before or after `dump`: commander gives the former to `devnet`
    const { dumpDevnet } = await import('./devnet-dump.ts');
    await dumpDevnet(cmd.optsWithGlobals<DevnetFlags & { out: string }>());
  });
}
