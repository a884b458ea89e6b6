import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from '../devnet/synthetic.ts';
import { JOB_JSON_SCHEMA_PATH, jobJsonSchema, jobJsonSchemaText } from './json-schema.ts';
import { loadJobFile } from './load-job.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const jobsDir = `${root}jobs/`;

async function exampleJobs(): Promise<string[]> {
  return (await readdir(jobsDir)).filter((f) => f.endsWith('.json') && f !== 'job.schema.json').sort();
}

describe('the job JSON Schema', () => {
  it('is committed as generated; run `tsx src/config/write-json-schema.ts` after changing job-schema.ts', async () => {
    expect(await readFile(`${root}${JOB_JSON_SCHEMA_PATH}`, 'utf8')).toBe(jobJsonSchemaText());
  });

  it('shows defaults, allows $schema, forbids unknown keys and documents every field', () => {
    const schema = jobJsonSchema() as {
      required: string[];
      additionalProperties: boolean;
      properties: Record<
        string,
        { default?: unknown; description?: string; items?: { additionalProperties: boolean; required: string[]; properties: Record<string, { description?: string }> } }
      >;
    };
    expect(schema.required).toEqual(['name', 'contracts']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties['pageSize']?.default).toBe(1000);
    expect(schema.properties['concurrency']?.default).toBe(4);
    // finality's default depends on the job's chain: no single default, the description names them
    expect(schema.properties['finality']?.default).toBeUndefined();
    expect(schema.properties['finality']?.description).toContain('64 for Ethereum (1), its testnets and any chain not named here');
    expect(schema.properties['finality']?.description).toContain('900 for Base (8453)');
    expect(schema.properties['source']?.default).toBe('builder');
    expect(schema.properties['verifyHeaders']?.default).toBe('allow-unverified');
    expect(Object.keys(schema.properties)).toEqual([
      '$schema',
      'name',
      'chain',
      'verifyHeaders',
      'contracts',
      'pageSize',
      'concurrency',
      'requestsPerSecond',
      'headerBatchSize',
      'commitRows',
      'keepIndexes',
      'finality',
      'source',
      'logsRange',
      'schedule',
    ]);
    for (const [key, field] of Object.entries(schema.properties)) expect(field.description, key).toBeTruthy();
    const contract = schema.properties['contracts']?.items;
    expect(contract?.additionalProperties).toBe(false);
    expect(contract?.required).toEqual(['address', 'fromBlock']);
    for (const [key, field] of Object.entries(contract?.properties ?? {})) expect(field.description, key).toBeTruthy();
  });
});

describe('the example jobs', () => {
  it('all validate and point editors at the schema', async () => {
    const files = await exampleJobs();
    expect(files).toEqual(expect.arrayContaining(['demo.json', 'usdc-base.example.json', 'usdc-usdt-mainnet.example.json', 'usdc-usdt-node.example.json']));
    for (const file of files) {
      await expect(loadJobFile(`${jobsDir}${file}`), file).resolves.toHaveProperty('name');
      expect(JSON.parse(await readFile(`${jobsDir}${file}`, 'utf8')).$schema, file).toBe('./job.schema.json');
    }
  });

  it('demo.json exports every contract of the default synthetic chain from its first block to the head', async () => {
    const dataset = generateSyntheticDataset(SYNTHETIC_DEFAULTS);
    const contracts = new Set([...dataset.tokens.map((t) => t.contractAddress), ...dataset.transfers.map((t) => t.contractAddress)]);
    const demo = await loadJobFile(`${jobsDir}demo.json`);
    expect(demo.name).toBe('demo');
    expect(demo.concurrency).toBe(4);
    expect(demo.contracts.map((c) => c.address).sort()).toEqual([...contracts].sort());
    for (const c of demo.contracts) expect(c).toEqual({ address: c.address, fromBlock: SYNTHETIC_DEFAULTS.startBlock });
  });
});
