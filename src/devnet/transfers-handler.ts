import type { ChainStore } from './chain-store.ts';
import { encodePageKey } from './page-key.ts';
import { selectPage } from './paging.ts';
import { transfersJson } from './transfers-json.ts';
import type { TransferRecord } from '../dataset/types.ts';
import { parseTransfersQuery, type QueryContext } from './transfers-query.ts';

/**
 * A page as it is sent: `head`, the object's keys up to and including `"tokenTransfers":` (the token's name may be
 * any text), then `rows` as a JSON array (`writeTransfersJson`), then `}`. `body` is the whole text, made when asked
 * for (a fault that damages the page reads it).
 */
export interface PageAnswer {
  status: 200;
  head: string;
  rows: readonly TransferRecord[];
  readonly body: string;
}

export type RestOutcome = PageAnswer | { status: 400; code: 'invalid_params'; message: string };

/**
 * Answers `GET …/builder/getTokenTransfers`: one page, newest first, with the token's metadata, `count`,
 * and `nextPageKey` only when more rows exist.
 */
export function handleTransfers(params: URLSearchParams, chain: ChainStore, ctx: Omit<QueryContext, 'head'>): RestOutcome {
  const query = parseTransfersQuery(params, { ...ctx, head: chain.head() });
  if (typeof query === 'string') return { status: 400, code: 'invalid_params', message: query };

  const { rows, more } = selectPage(chain.transfersOf(query.contract), query, query.pageSize);
  const token = chain.token(query.contract);
  const last = rows.at(-1);
  const head: Record<string, unknown> = {
    contractAddress: query.contract,
    contractDecimals: token?.contractDecimals ?? '',
    contractName: token?.contractName ?? '',
  };
  if (token?.contractSymbols !== undefined && token.contractSymbol === undefined) head.contractSymbols = token.contractSymbols;
  else head.contractSymbol = token?.contractSymbol ?? '';
  head.count = rows.length;
  if (more && last) {
    head.nextPageKey = encodePageKey(
      {
        contract: query.contract,
        fromBlock: query.fromBlock,
        toBlock: query.toBlock,
        afterBlock: last.blockNumber,
        afterLogIndex: last.logIndex,
        issuedAt: query.issuedAt,
      },
      ctx.pageKeySecret,
    );
  }
  const prefix = `${JSON.stringify(head).slice(0, -1)},"tokenTransfers":`;
  return {
    status: 200,
    head: prefix,
    rows,
    get body() {
      return `${prefix}${transfersJson(rows)}}`;
    },
  };
}
