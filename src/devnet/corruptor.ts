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
  type PageCorruption,
  type PageJson,
  type ServedCorruption,
} from './corruption.ts';
import { decodePageKey } from './page-key.ts';

/** A getTokenTransfers answer replaced by bad data. */
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

const HTML_PAGE =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n' +
  '<body><h1>502 Bad Gateway</h1><p>The upstream server did not answer in time.</p><hr><center>nginx</center></body></html>\n';

/**
 * The armed corruption order of a reference server: answers pass through `transfers` and `rpcAnswer`,
 * which hand back bad data while the order lasts and `undefined` / the answer itself otherwise. An answer
 * the kind cannot apply to (a row kind on an empty page, a cross-page kind on a first page) passes
 * unchanged and does not use up the order.
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

    /** A getTokenTransfers answer (`body`, a 200 page) as bad data, or `undefined` to serve it unchanged. */
    transfers(params: URLSearchParams, body: string): CorruptedAnswer | undefined {
      if (!order || !(PAGE_KINDS.has(order.kind) || BODY_KINDS.has(order.kind))) return undefined;
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
     * A JSON-RPC answer (single or batch) with the results of `erigon_getHeaderByHash` calls damaged while
     * a header order lasts; any other answer is returned as it is.
     */
    rpcAnswer(requestText: string, answer: unknown): unknown {
      if (!order || !HEADER_KINDS.has(order.kind) || answer === undefined) return answer;
      const kind = order.kind as HeaderCorruption;
      const headerCalls = headerCallIds(requestText);
      const damage = (member: unknown): unknown => {
        const a = member as { id?: unknown; result?: unknown } | null;
        if (!order || !a || typeof a.result !== 'object' || a.result === null || !headerCalls.has(a.id)) return member;
        const { header, block, field } = corruptHeader(kind, a.result as HeaderJson);
        use({ kind, block, field });
        return { ...a, result: header };
      };
      return Array.isArray(answer) ? answer.map(damage) : damage(answer);
    },
  };
}

export type Corruptor = ReturnType<typeof createCorruptor>;

/** Methods whose answer is the header of a block by hash: what an exporter verifies, so what header kinds damage. */
const HEADER_BY_HASH: ReadonlySet<unknown> = new Set(['erigon_getHeaderByHash', 'eth_getBlockByHash']);

/** The ids of the header-by-hash calls (`erigon_getHeaderByHash`, `eth_getBlockByHash`) of a JSON-RPC body, single or batch. */
function headerCallIds(text: string): Set<unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return new Set();
  }
  const calls = (Array.isArray(parsed) ? parsed : [parsed]) as ({ method?: unknown; id?: unknown } | null)[];
  return new Set(calls.filter((c) => HEADER_BY_HASH.has(c?.method)).map((c) => c!.id ?? null));
}
