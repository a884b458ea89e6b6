import { HttpStatusError, PageKeyRejectedError } from './errors.ts';
import type { HttpClient } from './http-client.ts';
import { parseTransfersPage, type TransfersPage } from './transfers-page.ts';

export interface TransfersPageRequest {
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

/**
 * `getTokenTransfers`, one validated page at a time. A 400 about the `pageKey` (unknown or expired)
 * becomes `PageKeyRejectedError`.
 *
 * @example
 * const page = await createTransfersClient({ http }).fetchPage({ contract: usdc, fromBlock: 17000000, toBlock: 17000100, pageSize: 1000 });
 * // GET {base}/builder/getTokenTransfers?contractAddress=0xa0b8…&fromBlock=17000000&toBlock=17000100&pageSize=1000
 */
export function createTransfersClient({ http }: { http: HttpClient }): TransfersClient {
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
      return parseTransfersPage(body, request);
    },
  };
}

function pageKeyRejection(err: unknown, request: TransfersPageRequest): PageKeyRejectedError | undefined {
  if (request.pageKey === undefined || !(err instanceof HttpStatusError) || err instanceof PageKeyRejectedError) return undefined;
  if (err.status !== 400 || err.apiCode !== 'invalid_params' || !/pagekey/i.test(err.apiMessage ?? '')) return undefined;
  return PageKeyRejectedError.from(err);
}
