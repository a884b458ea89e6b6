import { NO_BUDGET, type TimeBudget } from '../common/time-budget.ts';
import type { TransferRecord } from '../dataset/types.ts';
import { HttpStatusError, PageKeyRejectedError } from './errors.ts';
import type { HttpClient } from './http-client.ts';
import { continuePage } from './page-continuity.ts';
import { parseTransfersPage, type TransfersPage } from './transfers-page.ts';

interface TransfersPageRequest {
  contract: string;
  /** Inclusive. */
  fromBlock: number;
  /** Inclusive. */
  toBlock: number;
  pageSize: number;
  /** The previous page's `nextPageKey`, sent back unchanged. */
  pageKey?: string | undefined;
}

export interface TransfersClient {
  fetchPage(request: TransfersPageRequest): Promise<TransfersPage>;
}

/** Page keys remembered with the last row of the page that gave them; the oldest go first past this. */
const REMEMBERED_KEYS = 1024;

/**
 * `getTokenTransfers`, one validated page at a time. A 400 about the `pageKey` (unknown or expired)
 * becomes `PageKeyRejectedError`. A page fetched with a `nextPageKey` this client received is checked
 * against the last row of the page that gave the key (`continuePage`): an identical repeat of that row is
 * dropped, the same transfer in the same block with other fields is a BadResponseError.
 *
 * @example
 * const page = await createTransfersClient({ http }).fetchPage({ contract: usdc, fromBlock: 17000000, toBlock: 17000100, pageSize: 1000 });
 * // GET {base}/builder/getTokenTransfers?contractAddress=0xa0b8…&fromBlock=17000000&toBlock=17000100&pageSize=1000
 */
export function createTransfersClient({ http, budget = NO_BUDGET }: { http: HttpClient; budget?: TimeBudget | undefined }): TransfersClient {
  // next page key → the last row of the page that gave it (bounded: a chunk that stops leaves one behind)
  const lastRows = new Map<string, TransferRecord>();
  return {
    async fetchPage(request) {
      const params = new URLSearchParams({
        contractAddress: request.contract,
        fromBlock: String(request.fromBlock),
        toBlock: String(request.toBlock),
        pageSize: String(request.pageSize),
      });
      if (request.pageKey !== undefined) params.set('pageKey', request.pageKey);
      const context = { contract: request.contract, fromBlock: request.fromBlock, toBlock: request.toBlock };
      let body: unknown;
      try {
        body = await http.getJson(`/builder/getTokenTransfers?${params}`, context);
      } catch (err) {
        throw pageKeyRejection(err, request) ?? err;
      }
      const previous = request.pageKey === undefined ? undefined : lastRows.get(request.pageKey);
      const page = budget.timeSync('parse', () => continuePage(previous, parseTransfersPage(body, request), request));
      if (request.pageKey !== undefined) lastRows.delete(request.pageKey);
      const last = page.transfers.at(-1) ?? previous;
      if (page.nextPageKey !== undefined && last) {
        lastRows.delete(page.nextPageKey);
        lastRows.set(page.nextPageKey, last);
        if (lastRows.size > REMEMBERED_KEYS) lastRows.delete(lastRows.keys().next().value!);
      }
      return page;
    },
  };
}

function pageKeyRejection(err: unknown, request: TransfersPageRequest): PageKeyRejectedError | undefined {
  if (request.pageKey === undefined || !(err instanceof HttpStatusError) || err instanceof PageKeyRejectedError) return undefined;
  if (err.status !== 400 || err.apiCode !== 'invalid_params' || !/pagekey/i.test(err.apiMessage ?? '')) return undefined;
  return PageKeyRejectedError.from(err);
}
