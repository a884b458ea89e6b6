import { decodePageKey, type PagePosition } from './page-key.ts';

const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;

export interface TransfersQuery {
  contract: string;
  fromBlock: number;
  toBlock: number;
  pageSize: number;
  after?: { blockNumber: number; logIndex: number };
  issuedAt: number;
}

export interface QueryContext {
  head: number;
  now: number;
  pageKeySecret: string;
  pageKeyTtlMs: number;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const DECIMAL = /^(?:0|[1-9][0-9]{0,15})$/;
const HEX = /^0x[0-9a-fA-F]{1,14}$/;

/** Block numbers come as decimal text, or `0x` hex on this server. */
function parseBlock(name: string, text: string | null): number | string | undefined {
  if (text === null) return undefined;
  if (DECIMAL.test(text) || HEX.test(text)) {
    const n = Number(BigInt(text));
    if (Number.isSafeInteger(n)) return n;
  }
  return `${name} must be a block number (decimal, or 0x hex), got ${JSON.stringify(text)}`;
}

/**
 * Reads and checks the query of `getTokenTransfers`. Returns the query, or the text of the 400
 * `invalid_params` error that chain-api.md §1 prescribes.
 */
export function parseTransfersQuery(params: URLSearchParams, ctx: QueryContext): TransfersQuery | string {
  const address = params.get('contractAddress');
  if (address === null || address === '') return 'contractAddress is required';
  if (!ADDRESS.test(address)) return `contractAddress must be a 0x address of 40 hex digits, got ${JSON.stringify(address)}`;
  const contract = address.toLowerCase();

  const from = parseBlock('fromBlock', params.get('fromBlock'));
  if (typeof from === 'string') return from;
  const to = parseBlock('toBlock', params.get('toBlock'));
  if (typeof to === 'string') return to;

  let pageSize = DEFAULT_PAGE_SIZE;
  const sizeText = params.get('pageSize');
  if (sizeText !== null) {
    pageSize = /^[0-9]{1,7}$/.test(sizeText) ? Number(sizeText) : NaN;
    if (!(pageSize >= 1 && pageSize <= MAX_PAGE_SIZE)) {
      return `pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}, got ${JSON.stringify(sizeText)}`;
    }
  }

  const keyText = params.get('pageKey');
  if (keyText !== null && keyText !== '') {
    const position = decodePageKey(keyText, ctx.pageKeySecret);
    if (!position) return 'pageKey is unknown: send back the nextPageKey of the previous page unchanged';
    if (ctx.now - position.issuedAt > ctx.pageKeyTtlMs) return 'pageKey has expired: start the query again without pageKey';
    const mismatch = keyMismatch(position, contract, from, to);
    if (mismatch) return `pageKey belongs to another query (${mismatch}): start the query again without pageKey`;
    return {
      contract,
      fromBlock: position.fromBlock,
      toBlock: position.toBlock,
      pageSize,
      after: { blockNumber: position.afterBlock, logIndex: position.afterLogIndex },
      issuedAt: position.issuedAt,
    };
  }

  const fromBlock = from ?? 0;
  // absent toBlock = latest; a fromBlock past the head then simply finds nothing
  const toBlock = to ?? Math.max(ctx.head, fromBlock);
  if (fromBlock > toBlock) return `fromBlock (${fromBlock}) is greater than toBlock (${toBlock})`;
  return { contract, fromBlock, toBlock, pageSize, issuedAt: ctx.now };
}

function keyMismatch(p: PagePosition, contract: string, from: number | undefined, to: number | undefined): string {
  if (p.contract !== contract) return 'contractAddress differs';
  if (from !== undefined && from !== p.fromBlock) return 'fromBlock differs';
  if (to !== undefined && to !== p.toBlock) return 'toBlock differs';
  return '';
}
