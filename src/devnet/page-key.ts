import { keccak_256 } from '@noble/hashes/sha3.js';

/**
 * The position a `nextPageKey` stands for. The key is stateless (the position itself, signed), so it
 * stays valid across restarts on the same data, and through reorgs: paging resumes after the last row
 * served, by (blockNumber, logIndex).
 */
export interface PagePosition {
  contract: string;
  fromBlock: number;
  toBlock: number;
  /** The last row served: the next page starts strictly after it in newest-first order. */
  afterBlock: number;
  afterLogIndex: number;
  /** When the first page of this query was served (ms since epoch). */
  issuedAt: number;
}

const VERSION = 'p1';

function mac(payload: string, secret: string): string {
  return Buffer.from(keccak_256(new TextEncoder().encode(`${secret}\u0000${payload}`)).subarray(0, 12)).toString('base64url');
}

/** @example encodePageKey(pos, 'secret') // → 'p1.eyJjIjoi….Xr3…' */
export function encodePageKey(position: PagePosition, secret: string): string {
  const p = position;
  const payload = Buffer.from(JSON.stringify([p.contract, p.fromBlock, p.toBlock, p.afterBlock, p.afterLogIndex, p.issuedAt])).toString('base64url');
  return `${VERSION}.${payload}.${mac(payload, secret)}`;
}

/** The position of a key this server issued, or `undefined` for anything else (garbled, forged, foreign). */
export function decodePageKey(key: string, secret: string): PagePosition | undefined {
  const [version, payload, signature, ...rest] = key.split('.');
  if (version !== VERSION || !payload || !signature || rest.length || mac(payload, secret) !== signature) return undefined;
  try {
    const fields: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (!Array.isArray(fields) || fields.length !== 6) return undefined;
    const [contract, fromBlock, toBlock, afterBlock, afterLogIndex, issuedAt] = fields as unknown[];
    const ints = [fromBlock, toBlock, afterBlock, afterLogIndex, issuedAt];
    if (typeof contract !== 'string' || !ints.every((n) => Number.isSafeInteger(n))) return undefined;
    return {
      contract,
      fromBlock: fromBlock as number,
      toBlock: toBlock as number,
      afterBlock: afterBlock as number,
      afterLogIndex: afterLogIndex as number,
      issuedAt: issuedAt as number,
    };
  } catch {
    return undefined;
  }
}
