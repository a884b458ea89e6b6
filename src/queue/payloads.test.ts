import { describe, expect, it } from 'vitest';
import { jobSchema } from '../config/job-schema.ts';
import { chunkPayload, enqueuePayload } from './payloads.ts';

const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';

describe('task payloads', () => {
  it("read a node job back as it was queued, though a validated job holds a pageSize a node job's file may not state", () => {
    const job = jobSchema.parse({ name: 'node-job', source: 'node', contracts: [{ address: USDC, fromBlock: 1 }] });
    expect(job.pageSize).toBe(1000);
    const queued = JSON.parse(JSON.stringify({ job, runId: '7', rangeId: '8', chunkId: '9', head: 100 })) as unknown;
    expect(chunkPayload.parse(queued).job).toEqual(job);
    expect(enqueuePayload.parse({ job: JSON.parse(JSON.stringify(job)) as unknown }).job).toEqual(job);
  });

  it("keep a builder job's page size", () => {
    const job = jobSchema.parse({ name: 'builder-job', pageSize: 300, contracts: [{ address: USDC, fromBlock: 1 }] });
    expect(chunkPayload.parse({ job, runId: '7', rangeId: '8', chunkId: '9', head: 100 }).job.pageSize).toBe(300);
  });
});
