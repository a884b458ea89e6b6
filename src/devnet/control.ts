import type { IncomingMessage, ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { Logger } from 'pino';
import { headerLine, tokenLine, transferLine } from '../dataset/write.ts';
import type { ChainStore } from './chain-store.ts';
import { parseCorruptionOrder } from './corruption.ts';
import type { Corruptor } from './corruptor.ts';
import { readBody, sendJson } from './http-io.ts';
import { reorgDataset } from './reorg.ts';
import type { StatsCounter } from './stats.ts';

export interface ControlContext {
  chain: ChainStore;
  stats: StatsCounter;
  logger: Logger;
  config: { seed: number; chainId: number };
  reorgs: { count: number };
  corruptor: Corruptor;
}

/**
 * The control plane, outside any project id: health, counters, the contracts that have transfers, the
 * canonical chain as a dataset (`/__truth/*.jsonl`), reorgs and bad data (`/__control/corrupt`) on demand.
 */
export async function handleControl(req: IncomingMessage, res: ServerResponse, path: string, ctx: ControlContext) {
  const route = `${req.method} ${path}`;
  switch (route) {
    case 'GET /healthz':
      return sendJson(res, 200, { status: 'ok', head: ctx.chain.head(), ...ctx.chain.stats() });
    case 'GET /__stats':
      return sendJson(res, 200, ctx.stats.snapshot());
    case 'POST /__control/reset-stats':
      ctx.stats.reset();
      return sendJson(res, 200, ctx.stats.snapshot());
    case 'GET /__contracts':
      return sendJson(res, 200, ctx.chain.contracts());
    case 'GET /__truth/headers.jsonl':
      return streamLines(res, ctx.chain.truth().headers, headerLine);
    case 'GET /__truth/transfers.jsonl':
      return streamLines(res, ctx.chain.truth().transfers, transferLine);
    case 'GET /__truth/tokens.jsonl':
      return streamLines(res, ctx.chain.truth().tokens, tokenLine);
    case 'POST /__control/reorg':
      return reorg(req, res, ctx);
    case 'POST /__control/corrupt':
      return corrupt(req, res, ctx);
    case 'POST /__control/corrupt/clear':
      ctx.corruptor.clear();
      return sendJson(res, 200, ctx.corruptor.snapshot());
    case 'GET /__control/corrupt':
      return sendJson(res, 200, ctx.corruptor.snapshot());
    default:
      return sendJson(res, 404, { error: { code: 'not_found', message: `no such control endpoint: ${route}` } });
  }
}

async function reorg(req: IncomingMessage, res: ServerResponse, ctx: ControlContext) {
  const text = (await readBody(req)) ?? '';
  let depth: unknown;
  try {
    depth = (JSON.parse(text || '{}') as { depth?: unknown }).depth;
  } catch {
    depth = undefined;
  }
  const truth = ctx.chain.truth();
  if (typeof depth !== 'number' || !Number.isInteger(depth) || depth < 1 || depth > truth.headers.length) {
    return sendJson(res, 400, {
      error: { code: 'invalid_params', message: `body must be {"depth": N} with N from 1 to ${truth.headers.length}` },
    });
  }
  ctx.reorgs.count++;
  const { dataset, orphaned } = reorgDataset(truth, depth, ctx.config.seed * 1000 + ctx.reorgs.count, ctx.config.chainId);
  ctx.chain.replace(dataset, orphaned);
  const forkBlock = Math.min(...orphaned.map((h) => Number(BigInt(h.number!))));
  const summary = { depth, forkBlock, head: ctx.chain.head(), orphanedHeaders: orphaned.map((h) => h.hash) };
  ctx.logger.info({ msg: 'reorg', depth, forkBlock, head: summary.head });
  return sendJson(res, 200, summary);
}

/** Arms (or, with `{"kind": "none"}`, clears) the bad data the next answers carry. */
async function corrupt(req: IncomingMessage, res: ServerResponse, ctx: ControlContext) {
  let body: unknown;
  try {
    body = JSON.parse((await readBody(req)) || '{}');
  } catch {
    body = undefined;
  }
  const parsed = parseCorruptionOrder(body);
  if ('error' in parsed) return sendJson(res, 400, { error: { code: 'invalid_params', message: parsed.error } });
  ctx.corruptor.arm(parsed.order);
  ctx.logger.info({ msg: 'corruption armed', ...(parsed.order ?? { kind: 'none' }) });
  return sendJson(res, 200, ctx.corruptor.snapshot());
}

/** Writes one line per item, turning items into text a chunk at a time, so a large truth never sits in memory as text. */
async function streamLines<T>(res: ServerResponse, items: readonly T[], line: (item: T) => string) {
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  for (let i = 0; i < items.length; i += 5000) {
    const chunk = `${items
      .slice(i, i + 5000)
      .map(line)
      .join('\n')}\n`;
    if (!res.write(chunk)) await once(res, 'drain');
  }
  res.end();
}
