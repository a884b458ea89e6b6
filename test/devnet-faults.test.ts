import { beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../src/dataset/read.ts';
import type { Dataset } from '../src/dataset/types.ts';
import type { FaultOptions } from '../src/devnet/faults.ts';
import { FIXTURE_DIR } from './helpers/fixtures.ts';
import { getTransfers, rpc, startDevnet } from './helpers/devnet.ts';

const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';

let dataset: Dataset;
beforeAll(async () => {
  dataset = await readDataset(FIXTURE_DIR);
});

async function withFaults<T>(faults: FaultOptions, seed: number, body: (base: string, stats: () => Promise<any>) => Promise<T>) {
  const devnet = await startDevnet(dataset, { faults, seed });
  try {
    return await body(devnet.base, devnet.stats);
  } finally {
    await devnet.close();
  }
}

const url = (base: string) => `${base}/builder/getTokenTransfers?contractAddress=${WETH}&pageSize=1000`;

describe('fault injection', () => {
  it('serves faithfully when no fault is set', async () => {
    await withFaults({}, 1, async (base, stats) => {
      for (let i = 0; i < 20; i++) expect((await getTransfers(base, { contractAddress: WETH })).status).toBe(200);
      expect((await stats()).errors).toEqual({});
    });
  });

  it('--reset-rate destroys the socket mid-response', async () => {
    await withFaults({ resetRate: 1 }, 1, async (base, stats) => {
      await expect(fetch(url(base)).then((r) => r.text())).rejects.toThrow();
      expect((await stats()).errors).toEqual({ reset: 1 });
    });
  });

  it('--truncate-rate ends a 200 response with half a body', async () => {
    await withFaults({ truncateRate: 1 }, 1, async (base, stats) => {
      const res = await fetch(url(base));
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(() => JSON.parse(text)).toThrow();
      expect(text.startsWith('{"contractAddress":"0xc02a')).toBe(true);
      expect((await stats()).errors).toEqual({ truncated: 1 });
    });
  });

  it('--header-lag-rate answers "not found" the first time a hash is asked for, then the header', async () => {
    await withFaults({ headerLagRate: 1 }, 1, async (base) => {
      const call = { jsonrpc: '2.0', id: 1, method: 'erigon_getHeaderByHash', params: [dataset.headers[5]!.hash] };
      expect((await rpc(base, call)).body.error.code).toBe(-32000);
      expect((await rpc(base, call)).body.result).toEqual(dataset.headers[5]);
    });
  });

  it('--latency-ms delays every answer by at least the lower bound', async () => {
    await withFaults({ latencyMs: [40, 60] }, 1, async (base) => {
      const started = performance.now();
      await getTransfers(base, { contractAddress: WETH });
      expect(performance.now() - started).toBeGreaterThanOrEqual(39);
    });
  });

  it('repeats the same faults for the same seed, and others for another seed', async () => {
    const statuses = (seed: number) =>
      withFaults({ failRate: 0.5 }, seed, async (base) => {
        const out: number[] = [];
        for (let i = 0; i < 40; i++) out.push((await getTransfers(base, { contractAddress: WETH, pageSize: 1 })).status);
        return out;
      });
    const a = await statuses(11);
    expect(await statuses(11)).toEqual(a);
    expect(await statuses(12)).not.toEqual(a);
    expect(a.filter((s) => s === 200).length).toBeGreaterThan(5);
    expect(a.filter((s) => s !== 200).length).toBeGreaterThan(5);
  });
});
