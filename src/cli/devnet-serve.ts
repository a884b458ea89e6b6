import { systemClock } from '../common/clock.ts';
import { createLogger } from '../common/logger.ts';
import { createChainStore } from '../devnet/chain-store.ts';
import { syntheticForeignLogs } from '../devnet/foreign-logs.ts';
import { createRng, deriveSeed } from '../devnet/rng.ts';
import { readServedDataset } from '../devnet/served-dataset.ts';
import { createDevnet } from '../devnet/server.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from '../devnet/synthetic.ts';
import { parseDevnetOptions, type DevnetFlags } from './devnet-options.ts';
import { ConfigError } from '../common/errors.ts';

function randomSource(seed: number): () => number {
  const rng = createRng(deriveSeed(seed, 'faults'));
  return () => rng.next();
}

/**
 * `erc20-etl devnet …`: builds the chain (synthetic, or `--dataset DIR`), serves it until SIGINT or SIGTERM,
 * then closes the server.
 */
export async function serveDevnet(flags: DevnetFlags): Promise<void> {
  const options = parseDevnetOptions(flags, SYNTHETIC_DEFAULTS);
  const logger = createLogger({ name: 'devnet' });
  const started = performance.now();
  const dataset = options.dataset ? await readServedDataset(options.dataset) : generateSyntheticDataset(options.synthetic, { amounts: options.amounts, chainId: options.chainId });
  // the synthetic chain also holds logs that are not ERC-20 transfers (ERC-721 and older shapes), for eth_getLogs only
  const foreign = options.dataset ? [] : syntheticForeignLogs(options.synthetic);
  const chain = createChainStore(dataset, foreign);
  const devnet = createDevnet({
    config: {
      host: options.host,
      port: options.port,
      projectIds: options.projectIds,
      chainId: options.chainId,
      faults: options.faults,
      rateLimit: options.rateLimit,
      ...(options.rpcBatchLimit !== undefined && { rpcBatchLimit: options.rpcBatchLimit }),
      quota: options.quota,
      pageKeyTtlSeconds: options.pageKeyTtlSeconds,
      erigon: options.erigon,
      logsLimits: options.logsLimits,
      seed: options.faultSeed,
    },
    logger,
    clock: systemClock,
    chain,
    random: randomSource(options.faultSeed),
  });
  const origin = await devnet.listen().catch((err: unknown) => {
    const code = (err as { code?: string }).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      const why = code === 'EADDRINUSE' ? 'is in use by another process' : code === 'EACCES' ? 'may not be opened by this user' : 'is not an address of this machine';
      throw new ConfigError(
        `The reference server cannot listen on ${options.host}:${options.port}: that ${code === 'EADDRNOTAVAIL' ? 'host' : 'port'} ${why} (${code}).`,
        [],
        'Pick another --port (0 picks a free one) or --host, or stop what holds it.',
      );
    }
    throw err;
  });
  // listen for SIGINT/SIGTERM before saying where it listens: whoever reads that line may stop it at once
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ msg: 'devnet stopping', signal });
      void devnet.close().then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  const s = chain.stats();
  const source = options.dataset ? `dataset ${options.dataset}` : `synthetic chain (seed ${options.synthetic.seed}${options.amounts === 'realistic' ? ', realistic amounts' : ''})`;
  process.stdout.write(
    `erc20-etl devnet: serving ${source}: ${s.transfers} transfers of ${s.contracts} contracts in ${s.headers} headers, ` +
      `${foreign.length ? `${foreign.length} other Transfer-topic logs (ERC-721 and older shapes), ` : ''}head ${chain.head()}; ` +
      `chain id ${options.chainId}${options.erigon ? '' : ', no erigon_getHeaderByHash'}\n` +
      `erc20-etl devnet: listening on ${origin} — base URL ${origin}/<project-id> ` +
      `(${options.projectIds.length} project id(s) accepted), ready in ${Math.round(performance.now() - started)} ms\n`,
  );
  await stopped;
}
