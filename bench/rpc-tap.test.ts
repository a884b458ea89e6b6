import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logsCallFigures, startRpcTap, type RpcTap } from './rpc-tap.ts';

type Call = { id: number; method: string; params: [{ fromBlock: string; toBlock: string }] };

/** A log as a node answers it: ~300 bytes, so 300 of them make an answer the tap counts without parsing. */
const log = (i: number) => ({
  address: `0x${'ab'.repeat(20)}`,
  topics: [`0x${'dd'.repeat(32)}`],
  data: `0x${'00'.repeat(32)}`,
  blockNumber: '0x1',
  transactionHash: `0x${'cd'.repeat(32)}`,
  transactionIndex: '0x0',
  blockHash: `0x${'ef'.repeat(32)}`,
  logIndex: `0x${i.toString(16)}`,
  removed: false,
});

/** eth_getLogs from block 1: as many logs as the span has blocks; from block 2: refused; anything else: 0x1. */
function answer(call: Call) {
  if (call.method !== 'eth_getLogs') return { jsonrpc: '2.0', id: call.id, result: '0x1' };
  const from = Number.parseInt(call.params[0].fromBlock, 16);
  const to = Number.parseInt(call.params[0].toBlock, 16);
  if (from === 2) return { jsonrpc: '2.0', id: call.id, error: { code: -32005, message: 'query returned more than 10000 results' } };
  return { jsonrpc: '2.0', id: call.id, result: Array.from({ length: to - from + 1 }, (_, i) => log(i)) };
}

let upstream: Server;
let tap: RpcTap;
beforeAll(async () => {
  upstream = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    if (req.url !== '/bench') return void res.writeHead(404).end();
    const parsed = JSON.parse(body) as Call | Call[];
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  tap = await startRpcTap(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}/bench`);
});
afterAll(async () => {
  await tap?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

const post = async (body: unknown) => {
  const res = await fetch(tap.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as unknown };
};
const A = `0x${'aa'.repeat(20)}`;
const B = `0x${'bb'.repeat(20)}`;
const getLogs = (id: number, from: number, to: number, address: string | string[] = A) => ({
  jsonrpc: '2.0',
  id,
  method: 'eth_getLogs',
  params: [{ address, fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}` }],
});

describe('startRpcTap', () => {
  it('passes answers through unchanged and records each eth_getLogs call: its blocks, its logs or its refusal', async () => {
    expect(tap.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/bench$/);
    tap.take();
    const big = await post(getLogs(1, 1, 300)); // ~100 KB: counted by key
    expect((big.body as { result: unknown[] }).result).toHaveLength(300);
    expect((await post(getLogs(2, 1, 4))).body).toMatchObject({ id: 2, result: [log(0), log(1), log(2), log(3)] });
    expect((await post(getLogs(3, 2, 9))).body).toMatchObject({ id: 3, error: { code: -32005 } });
    expect((await post({ jsonrpc: '2.0', id: 4, method: 'eth_blockNumber', params: [] })).body).toEqual({ jsonrpc: '2.0', id: 4, result: '0x1' });
    const batch = await post([getLogs(5, 2, 3), { jsonrpc: '2.0', id: 6, method: 'eth_chainId', params: [] }, getLogs(7, 1, 2, [B.toUpperCase().replace('0X', '0x')])]);
    expect(batch.body).toHaveLength(3);
    const records = tap.take();
    const refusal = { code: -32005, message: 'query returned more than 10000 results' };
    expect(records).toEqual([
      { contract: A, fromBlock: 1, toBlock: 300, logs: 300 },
      { contract: A, fromBlock: 1, toBlock: 4, logs: 4 },
      { contract: A, fromBlock: 2, toBlock: 9, error: refusal },
      { contract: A, fromBlock: 2, toBlock: 3, error: refusal },
      { contract: B, fromBlock: 1, toBlock: 2, logs: 2 },
    ]);
    expect(tap.take()).toEqual([]);
    expect(logsCallFigures(records)).toEqual({
      calls: 5,
      refused: 2,
      refusedBy: { '-32005': 2 },
      answered: 3,
      logs: 306,
      meanLogs: 102,
      maxLogs: 300,
      byContract: {
        [A]: { calls: 4, refused: 2, answered: 2, logs: 304, meanLogs: 152, maxLogs: 300 },
        [B]: { calls: 1, refused: 0, answered: 1, logs: 2, meanLogs: 2, maxLogs: 2 },
      },
    });
  });

  it('passes other paths and statuses through', async () => {
    const res = await fetch(tap.url.replace(/\/bench$/, '/elsewhere'), { method: 'POST', body: '{}' });
    expect(res.status).toBe(404);
    await res.arrayBuffer();
    expect(tap.take()).toEqual([]);
  });
});

describe('logsCallFigures', () => {
  it('has no mean without an answered call', () => {
    expect(logsCallFigures([])).toMatchObject({ calls: 0, refused: 0, answered: 0, meanLogs: Number.NaN });
  });
});
