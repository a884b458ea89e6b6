import { describe, expect, it } from 'vitest';
import { createChainStore } from './chain-store.ts';
import { syntheticForeignLogs } from './foreign-logs.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from './synthetic.ts';

const options = { ...SYNTHETIC_DEFAULTS, blocks: 50, transfers: 300, tokens: 2 };
const dataset = generateSyntheticDataset(options);
const foreign = syntheticForeignLogs(options);

describe('the chain store', () => {
  it('holds transfers and foreign logs whose text needs no JSON escaping: the server writes them unescaped', () => {
    expect(() => createChainStore(dataset, foreign)).not.toThrow();
  });

  it('refuses a transfer or a foreign log with text that would need escaping, naming the field', () => {
    const [t, ...rest] = dataset.transfers;
    const bad = { ...dataset, transfers: [{ ...t!, contractAddress: `${t!.contractAddress}"` }, ...rest] };
    expect(() => createChainStore(bad)).toThrow(/field contractAddress is not hex, decimal or ISO text/);
    const [log, ...others] = foreign;
    const badLog = { ...log!, topics: [log!.topics[0]!, 'a\\b'] };
    expect(() => createChainStore(dataset, [badLog, ...others])).toThrow(/field topics\[1\] is not hex, decimal or ISO text/);
    expect(() => createChainStore(dataset, [{ ...log!, data: undefined as unknown as string }, ...others])).toThrow(/field data is not hex, decimal or ISO text/);
  });
});
