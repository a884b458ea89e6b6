import { afterAll, beforeAll } from 'vitest';
import type { Dataset } from '../../src/dataset/types.ts';
import type { DevnetConfig } from '../../src/devnet/server.ts';
import { generateSyntheticDataset } from '../../src/devnet/synthetic.ts';
import { startDevnet, type RunningDevnet } from './devnet.ts';
import { migratedWarehouse } from './exporter.ts';

export interface SyntheticWorld {
  dataset: Dataset;
  devnet: RunningDevnet;
  target: Awaited<ReturnType<typeof migratedWarehouse>>;
  /** The dataset's token contracts, sorted. */
  contracts(): string[];
}

/**
 * For a `describe` block: a synthetic chain, a reference server serving it over HTTP and a migrated warehouse
 * of its own, set up before its tests and taken down after them. Read the fields inside tests.
 *
 * @example const world = syntheticWorld('label', { seed: 5, blocks: 600, tokens: 3, transfers: 4000, startBlock: 1_000_000 });
 */
export function syntheticWorld(label: string, options: Parameters<typeof generateSyntheticDataset>[0], devnetConfig: Partial<DevnetConfig> = {}): SyntheticWorld {
  const world = {
    contracts: () => [...new Set(world.dataset.transfers.map((t) => t.contractAddress))].sort(),
  } as SyntheticWorld;
  beforeAll(async () => {
    world.dataset = generateSyntheticDataset(options);
    world.devnet = await startDevnet(world.dataset, devnetConfig);
    world.target = await migratedWarehouse(label);
  });
  afterAll(async () => {
    await world.target?.drop();
    await world.devnet?.close();
  });
  return world;
}
