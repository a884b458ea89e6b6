import type { TransferRecord } from '../dataset/types.ts';
import type { HeaderJson } from '../eth/header-fields.ts';
import type { ChainStore } from './chain-store.ts';
import {
  BODY_CORRUPTIONS,
  corruptHeader,
  corruptPage,
  HEADER_CORRUPTIONS,
  PAGE_CORRUPTIONS,
  type CorruptionKind,
  type CorruptionOrder,
  type HeaderCorruption,
  LOGS_BODY_CORRUPTIONS,
  LOGS_CORRUPTIONS,
  type LogsCorruption,
  type PageCorruption,
  type PageJson,
  type ServedCorruption,
} from './corruption.ts';
import { type LogFilter, parseLogFilter } from './log-filter.ts';
import { LogsAnswer } from './logs-answer.ts';
import { corruptLogs, type LogsCall } from './logs-corruption.ts';
import { decodePageKey } from './page-key.ts';
import { moveToOtherBlock } from './wrong-block.ts';

/** A getTokenTransfers or JSON-RPC answer replaced by bad data. */
export type CorruptedAnswer =
  | { type: 'json'; text: string }
  | { type: 'html'; text: string }
  /** A valid-looking page padded with a giant string to `bytes` bytes in all. */
  | { type: 'huge'; page: string; bytes: number };

export interface CorruptorDeps {
  chain: ChainStore;
  /** Counts each corruption served as `errors["corrupt:<kind>"]`. */
  stats: { countError(key: string): void };
  pageKeySecret: string;
}

/** The size of a `huge-body` answer: 50 MB. */
const HUGE_BODY_BYTES = 50 * 1024 * 1024;
/** Served corruptions listed by `GET /__control/corrupt`: the newest this many. */
const SERVED_KEPT = 100;

const PAGE_KINDS = new Set<string>(PAGE_CORRUPTIONS);
const BODY_KINDS = new Set<string>(BODY_CORRUPTIONS);
const HEADER_KINDS = new Set<string>(HEADER_CORRUPTIONS);
const LOGS_KINDS = new Set<string>(LOGS_CORRUPTIONS);
const LOGS_BODY_KINDS = new Set<string>(LOGS_BODY_CORRUPTIONS);

const HTML_PAGE =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n' +
  '<body><h1>502 Bad Gateway</h1><p>The upstream server did not answer in time.</p><hr><center>nginx</center></body></html>\n';

/**
 * The armed corruption order of a reference server: answers pass through `transfers` and `rpc`, which
 * hand back bad data while the order lasts and `undefined` otherwise. An answer the kind cannot apply to (a
 * row kind on an empty page, a cross-page kind on a first page, a log kind on an answer without transfer logs)
 * passes unchanged and does not use up the order.
 *
 * @example
 * const corruptor = createCorruptor({ chain, stats, pageKeySecret });
 * corruptor.arm({ kind: 'negative-value', times: 1 });
 * corruptor.transfers(url.searchParams, body); // → { type: 'json', text: '{…"value":"-5"…}' }, then undefined
 */
export function createCorruptor({ chain, stats, pageKeySecret }: CorruptorDeps) {
  let order: CorruptionOrder | null = null;
  let served: ServedCorruption[] = [];

  function use(entry: ServedCorruption) {
    stats.countError(`corrupt:${entry.kind}`);
    served.push(entry);
    if (served.length > SERVED_KEPT) served = served.slice(-SERVED_KEPT);
    if (order && --order.times <= 0) order = null;
  }

  /** The row a page key points after: the last row of the page that issued it. */
  function previousRow(contract: string, pageKey: string | undefined): TransferRecord | undefined {
    const position = pageKey === undefined ? undefined : decodePageKey(pageKey, pageKeySecret);
    if (!position || position.contract !== contract) return undefined;
    return chain.transfersOf(contract).find((t) => t.blockNumber === position.afterBlock && t.logIndex === position.afterLogIndex);
  }

  /** `wrong-block`: a page with a transfer moved into another of its blocks (wrong-block.ts). */
  function wrongBlock(armed: CorruptionOrder, params: URLSearchParams, body: string): CorruptedAnswer | undefined {
    const contract = (params.get('contractAddress') ?? '').toLowerCase();
    if (armed.contract !== undefined && armed.contract !== contract) return undefined;
    const result = moveToOtherBlock(JSON.parse(body) as PageJson, contract, chain);
    if (!result) return undefined;
    use({ kind: armed.kind, contract, block: result.block, field: result.field });
    return { type: 'json', text: JSON.stringify(result.page) };
  }

  return {
    arm(next: CorruptionOrder | null): void {
      order = next && { ...next };
    },
    clear(): void {
      order = null;
    },
    /** The armed order (with the answers it has left) and the corruptions served lately. */
    snapshot(): { armed: CorruptionOrder | null; served: ServedCorruption[] } {
      return { armed: order && { ...order }, served: served.map((s) => ({ ...s })) };
    },

    /**
     * A getTokenTransfers answer (`page`, a 200 page: its text, or how to make it when an order needs it) as bad data,
     * or `undefined` to serve it unchanged.
     */
    transfers(params: URLSearchParams, page: string | (() => string)): CorruptedAnswer | undefined {
      if (!order) return undefined;
      const body = typeof page === 'string' ? page : page();
      if (order.kind === 'wrong-block') return wrongBlock(order, params, body);
      if (!(PAGE_KINDS.has(order.kind) || BODY_KINDS.has(order.kind))) return undefined;
      const contract = (params.get('contractAddress') ?? '').toLowerCase();
      if (order.contract !== undefined && order.contract !== contract) return undefined;
      const kind: CorruptionKind = order.kind;
      if (kind === 'html-200' || kind === 'huge-body') {
        use({ kind, contract, field: 'body' });
        return kind === 'html-200' ? { type: 'html', text: HTML_PAGE } : { type: 'huge', page: body, bytes: HUGE_BODY_BYTES };
      }
      const pageKey = params.get('pageKey') || undefined;
      const result = corruptPage(kind as PageCorruption, JSON.parse(body) as PageJson, {
        pageKey,
        previousRow: kind === 'duplicate-across-pages' || kind === 'conflicting-duplicate' ? previousRow(contract, pageKey) : undefined,
      });
      if (!result) return undefined;
      use({ kind, contract, ...(result.block !== undefined && { block: result.block }), field: result.field });
      return { type: 'json', text: JSON.stringify(result.page) };
    },

    /**
     * A JSON-RPC answer (single or batch) as bad data while an order for it lasts, or `undefined` to serve it
     * unchanged: header kinds damage the results of header-by-hash calls; `eth_getLogs` kinds the results of
     * the `eth_getLogs` calls that ask for the order's contract (`corruptLogs`), as many as the order has left;
     * `logs-html-200` and `logs-huge-body` replace the whole body of a POST holding such a call answered.
     */
    rpc(requestText: string, answer: unknown): CorruptedAnswer | undefined {
      if (!order || answer === undefined) return undefined;
      const kind = order.kind;
      if (!HEADER_KINDS.has(kind) && !LOGS_KINDS.has(kind) && !LOGS_BODY_KINDS.has(kind)) return undefined;
      const calls = callsOf(requestText);
      const members = (Array.isArray(answer) ? answer : [answer]) as unknown[];
      const resultOf = (member: unknown) => {
        const a = member as { id?: unknown; result?: unknown } | null;
        return a && typeof a === 'object' && 'result' in a ? { id: a.id ?? null, result: a.result } : undefined;
      };
      if (LOGS_BODY_KINDS.has(kind)) {
        const hit = members.map(resultOf).find((m) => m && m.result instanceof LogsAnswer && logsCallOf(calls.get(m.id)));
        if (!hit) return undefined;
        const contract = logsCallOf(calls.get(hit.id))!.contract;
        use({ kind, ...(contract !== undefined && { contract }), field: 'body' });
        return kind === 'logs-html-200' ? { type: 'html', text: HTML_PAGE } : { type: 'huge', page: JSON.stringify(answer), bytes: HUGE_BODY_BYTES };
      }
      let damaged = false;
      const damage = (member: unknown): unknown => {
        const m = resultOf(member);
        if (!order || !m) return member;
        const call = calls.get(m.id);
        if (HEADER_KINDS.has(kind)) {
          if (!HEADER_BY_HASH.has(call?.method) || typeof m.result !== 'object' || m.result === null) return member;
          const { header, block, field } = corruptHeader(kind as HeaderCorruption, m.result as HeaderJson);
          use({ kind, block, field });
          damaged = true;
          return { ...(member as object), result: header };
        }
        const logsCall = logsCallOf(call);
        if (!logsCall || !(m.result instanceof LogsAnswer)) return member;
        const result = corruptLogs(kind as LogsCorruption, m.result.toJSON(), logsCall.call, chain);
        if (!result) return member;
        use({ kind, ...(logsCall.contract !== undefined && { contract: logsCall.contract }), block: result.block, log: result.log, field: result.field });
        damaged = true;
        return { ...(member as object), result: result.logs };
      };
      const out = Array.isArray(answer) ? answer.map(damage) : damage(answer);
      return damaged ? { type: 'json', text: JSON.stringify(out) } : undefined;
    },
  };

  /**
   * What an `eth_getLogs` call asks for, when it asks for the order's contract (or the order names none): its
   * blocks, emitters and topics, and the contract to name (the order's, else the one address asked).
   */
  function logsCallOf(call: RpcCall | undefined): { call: LogsCall; contract: string | undefined } | undefined {
    if (call?.method !== 'eth_getLogs' || !Array.isArray(call.params)) return undefined;
    let filter: LogFilter;
    try {
      filter = parseLogFilter(call.params, chain);
    } catch {
      return undefined;
    }
    const wanted = order?.contract;
    if (wanted !== undefined && filter.addresses !== undefined && !filter.addresses.has(wanted)) return undefined;
    let blocks: { from: number; to: number };
    if ('hash' in filter.blocks) {
      const header = chain.headerByHash(filter.blocks.hash);
      if (!header) return undefined;
      const n = Number(BigInt(header.number!));
      blocks = { from: n, to: n };
    } else blocks = filter.blocks;
    const only = filter.addresses?.size === 1 ? [...filter.addresses][0] : undefined;
    return { call: { ...blocks, addresses: filter.addresses, topics: filter.topics }, contract: wanted ?? only };
  }
}

export type Corruptor = ReturnType<typeof createCorruptor>;

/** Methods whose answer is the header of a block by hash: what an exporter verifies, so what header kinds damage. */
const HEADER_BY_HASH: ReadonlySet<unknown> = new Set(['erigon_getHeaderByHash', 'eth_getBlockByHash']);

/** One call of a JSON-RPC body. */
interface RpcCall {
  method: unknown;
  params: unknown;
}

/** The calls of a JSON-RPC body, single or batch, by id (`null` for none): how an answer's members are matched to what they answer. */
function callsOf(text: string): Map<unknown, RpcCall> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return new Map();
  }
  const calls = (Array.isArray(parsed) ? parsed : [parsed]) as ({ method?: unknown; params?: unknown; id?: unknown } | null)[];
  return new Map(calls.filter((c) => c !== null && typeof c === 'object').map((c) => [c!.id ?? null, { method: c!.method, params: c!.params }]));
}
