import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

/** One `eth_getLogs` call as it crossed the wire: the blocks asked, and what came back. */
export interface LogsCallRecord {
  /** The filter's address: the contract, or the first of a list. */
  contract: string;
  fromBlock: number;
  toBlock: number;
  /** Logs in the answer; undefined when the call was refused. */
  logs?: number;
  /** The JSON-RPC error it was answered with (a refusal for size, in the bench), or the HTTP status without one. */
  error?: { code: number | string; message: string };
}

/** A pass-through JSON-RPC proxy in front of the reference server that records every `eth_getLogs` call. */
export interface RpcTap {
  /** The URL to give the exporter in place of `target`: same path, the tap's host. */
  url: string;
  /** The calls recorded since the start or the last `take`, and forgets them. */
  take(): LogsCallRecord[];
  close(): Promise<void>;
}

const LOG_KEY = Buffer.from('"logIndex"');
/** An error answer is short: bodies beyond this are results, counted by their `"logIndex"` keys without parsing. */
const PARSE_BELOW_BYTES = 64 * 1024;

/**
 * Starts a proxy on 127.0.0.1 (any free port) that forwards every request to `target`'s origin unchanged and
 * streams the answer back, and records each `eth_getLogs` call: its blocks, and how many logs it answered or the
 * error it was refused with. Independent of both the exporter's and the server's own counters: it counts
 * what crossed the wire. Small answers are parsed; a large one is a result, and its logs are counted by the
 * `"logIndex"` key each log has once (cheap enough not to slow the run it watches much: it is still a process
 * hop, so timed runs go to the server directly). A JSON-RPC batch holding `eth_getLogs` calls is parsed whole.
 *
 * @example
 * const tap = await startRpcTap(devnet.apiUrl); // exporter → tap.url → devnet
 * … run the exporter with CHAIN_API_URL = tap.url …
 * tap.take() // → [{ contract: '0xa0b8…', fromBlock: 98001, toBlock: 100000, logs: 7312 }, { contract: '0xa0b8…', fromBlock: 95001, toBlock: 98000, error: { code: -32005, … } }, …]
 */
export async function startRpcTap(target: string): Promise<RpcTap> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let calls: LogsCallRecord[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readAll(req);
    const asked = logsCalls(req.method === 'POST' ? body : undefined);
    const out = request({
      protocol: upstream.protocol,
      hostname: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: { ...endToEnd(req.headers), host: upstream.host },
      agent,
    });
    out.end(body);
    const [answer] = (await once(out, 'response')) as [IncomingMessage];
    res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
    const chunks: Buffer[] = [];
    for await (const chunk of answer) {
      if (asked.size) chunks.push(chunk as Buffer);
      if (!res.write(chunk)) await once(res, 'drain');
    }
    res.end();
    if (asked.size) calls.push(...record(asked, Buffer.concat(chunks), answer.statusCode ?? 0));
  };

  const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = new URL(target);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString().replace(/\/$/, ''),
    take: () => {
      const taken = calls;
      calls = [];
      return taken;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

/** The tap's figures of one run: calls, refusals, and the logs per answered call. */
export interface LogsCallFigures {
  calls: number;
  refused: number;
  /** Refusals by JSON-RPC code (or HTTP status). */
  refusedBy: Record<string, number>;
  answered: number;
  logs: number;
  /** logs ÷ answered; NaN when none answered. */
  meanLogs: number;
  /** The largest answer, in logs. */
  maxLogs: number;
  /** The same per contract (without the breakdown), by contract address. */
  byContract: Record<string, Omit<LogsCallFigures, 'byContract' | 'refusedBy'>>;
}

/**
 * Sums the records of one run, in all and per contract.
 *
 * @example logsCallFigures([{ contract: a, fromBlock: 1, toBlock: 9, logs: 10 }, { contract: a, fromBlock: 1, toBlock: 99, error: { code: -32005, message: '…' } }])
 * // → { calls: 2, refused: 1, refusedBy: { '-32005': 1 }, answered: 1, logs: 10, meanLogs: 10, maxLogs: 10, byContract: { [a]: { calls: 2, … } } }
 */
export function logsCallFigures(records: readonly LogsCallRecord[]): LogsCallFigures {
  const refusedBy: Record<string, number> = {};
  for (const r of records) {
    if (r.logs !== undefined) continue;
    const key = String(r.error?.code ?? 'unknown');
    refusedBy[key] = (refusedBy[key] ?? 0) + 1;
  }
  const contracts = [...new Set(records.map((r) => r.contract))].sort();
  const byContract = Object.fromEntries(contracts.map((c) => [c, sums(records.filter((r) => r.contract === c))]));
  return { ...sums(records), refusedBy, byContract };
}

function sums(records: readonly LogsCallRecord[]): Omit<LogsCallFigures, 'byContract' | 'refusedBy'> {
  let logs = 0;
  let answered = 0;
  let maxLogs = 0;
  for (const r of records) {
    if (r.logs === undefined) continue;
    answered++;
    logs += r.logs;
    maxLogs = Math.max(maxLogs, r.logs);
  }
  return { calls: records.length, refused: records.length - answered, answered, logs, meanLogs: answered ? logs / answered : Number.NaN, maxLogs };
}

type JsonRpcRequest = { id?: unknown; method?: unknown; params?: unknown };

/** The `eth_getLogs` calls of a request body, by JSON-RPC id (as JSON text), with their blocks. */
function logsCalls(body: Buffer | undefined): Map<string, { contract: string; fromBlock: number; toBlock: number; batch: boolean }> {
  const found = new Map<string, { contract: string; fromBlock: number; toBlock: number; batch: boolean }>();
  if (!body?.length) return found;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return found;
  }
  const batch = Array.isArray(parsed);
  for (const call of (batch ? parsed : [parsed]) as JsonRpcRequest[]) {
    if (call?.method !== 'eth_getLogs') continue;
    const filter = (Array.isArray(call.params) ? call.params[0] : undefined) as { address?: unknown; fromBlock?: unknown; toBlock?: unknown } | undefined;
    const address = Array.isArray(filter?.address) ? filter.address[0] : filter?.address;
    const contract = typeof address === 'string' ? address.toLowerCase() : '';
    found.set(JSON.stringify(call.id ?? null), { contract, fromBlock: blockOf(filter?.fromBlock), toBlock: blockOf(filter?.toBlock), batch });
  }
  return found;
}

function blockOf(tag: unknown): number {
  return typeof tag === 'string' && /^0x[0-9a-f]+$/i.test(tag) ? Number.parseInt(tag, 16) : Number.NaN;
}

type JsonRpcAnswer = { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } };

/** What each asked call got, from the answer's body. */
function record(asked: ReturnType<typeof logsCalls>, body: Buffer, status: number): LogsCallRecord[] {
  const [first] = asked.values();
  if (asked.size === 1 && !first!.batch && body.length >= PARSE_BELOW_BYTES && status === 200) {
    return [{ contract: first!.contract, fromBlock: first!.fromBlock, toBlock: first!.toBlock, logs: countKey(body, LOG_KEY) }];
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const answers = new Map<string, JsonRpcAnswer>();
  for (const a of (Array.isArray(parsed) ? parsed : [parsed]) as (JsonRpcAnswer | undefined)[]) {
    if (a && typeof a === 'object') answers.set(JSON.stringify(a.id ?? null), a);
  }
  return [...asked].map(([id, call]) => {
    // an error for the whole request (HTTP 4xx/5xx) comes with a null id
    const a = answers.get(id) ?? (answers.size === 1 ? [...answers.values()][0] : undefined);
    const span = { contract: call.contract, fromBlock: call.fromBlock, toBlock: call.toBlock };
    if (a && Array.isArray(a.result)) return { ...span, logs: a.result.length };
    const code = typeof a?.error?.code === 'number' ? a.error.code : `HTTP ${status}`;
    const message = typeof a?.error?.message === 'string' ? a.error.message : '';
    return { ...span, error: { code, message } };
  });
}

/** How many times `key` occurs in `body`. */
function countKey(body: Buffer, key: Buffer): number {
  let n = 0;
  for (let at = body.indexOf(key); at !== -1; at = body.indexOf(key, at + key.length)) n++;
  return n;
}

/** The headers without the hop-by-hop ones, which each side of the tap sets for itself. */
function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { connection: _c, 'keep-alive': _k, 'transfer-encoding': _t, ...rest } = headers;
  return rest;
}

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
