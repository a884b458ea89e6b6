import type { IncomingMessage, ServerResponse } from 'node:http';

const MAX_REQUEST_BODY = 5 * 1024 * 1024;

/** Reads a request body as text, refusing bodies over `limit` bytes. */
export async function readBody(req: IncomingMessage, limit = MAX_REQUEST_BODY): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export type Cut = 'reset' | 'truncated' | undefined;

/**
 * Memory for the bodies of pages, used again once a body is sent: a page's 420 KB in a buffer made anew is a fresh
 * mapping each time, and on a virtual machine its every page fault costs more than writing the text into it.
 */
export interface SendBuffers {
  /** A buffer of `size` bytes, in memory an earlier body used when one is free. */
  take(size: number): Buffer;
  /** The body `take` gave is sent: its memory may be used again. */
  give(bytes: Buffer): void;
}

/**
 * Keeps up to `keep` freed buffers (each rounded up to 64 KB, so pages of about one size fit any of them).
 *
 * @example const buffers = createSendBuffers(); const b = buffers.take(421_000); …; buffers.give(b);
 */
export function createSendBuffers(keep = 8): SendBuffers {
  const free: ArrayBuffer[] = [];
  return {
    take(size) {
      // the smallest that fits: a header batch's 100 KB does not take the memory of a 6 MB eth_getLogs answer
      let i = -1;
      for (let k = 0; k < free.length; k++) if (free[k]!.byteLength >= size && (i < 0 || free[k]!.byteLength < free[i]!.byteLength)) i = k;
      const memory = i >= 0 ? free.splice(i, 1)[0]! : new ArrayBuffer(Math.ceil(Math.max(size, 1) / 65_536) * 65_536);
      return Buffer.from(memory, 0, size);
    },
    give(bytes) {
      if (free.length < keep) free.push(bytes.buffer as ArrayBuffer);
    },
  };
}

/**
 * A page's bytes: its head as UTF-8 (the token's name may be any text), its rows' ASCII parts, and the closing `}`,
 * written straight into one buffer. The same bytes as the UTF-8 of the page's whole text, without making that text.
 *
 * @example pageBytes({ head: '{"contractName":"Éther","tokenTransfers":', rows: ['[]'] }, buffers).toString() // → '{"contractName":"Éther","tokenTransfers":[]}'
 */
export function pageBytes(page: { head: string; rows: readonly string[] }, buffers: SendBuffers): Buffer {
  const headSize = Buffer.byteLength(page.head, 'utf8');
  let size = headSize + 1;
  for (const part of page.rows) size += part.length;
  const bytes = buffers.take(size);
  let at = bytes.write(page.head, 0, 'utf8');
  for (const part of page.rows) at += bytes.write(part, at, 'latin1');
  bytes[at] = 0x7d; // }
  return bytes;
}

/**
 * A JSON value's UTF-8 bytes, written into memory `buffers` gives: a JSON-RPC answer of 10,000 logs is about 6 MB,
 * and `Buffer.from` of its text (a buffer made anew) took about ten times as long as writing it into memory used before.
 *
 * @example jsonBytes({ id: 1, result: '0x1' }, buffers).toString() // → '{"id":1,"result":"0x1"}'
 */
export function jsonBytes(value: unknown, buffers: SendBuffers): Buffer {
  const text = JSON.stringify(value);
  const bytes = buffers.take(Buffer.byteLength(text, 'utf8'));
  bytes.write(text, 0, 'utf8');
  return bytes;
}

/**
 * Sends a JSON body (text, a value, or bytes already encoded). A `cut` response is damaged on purpose: `reset`
 * destroys the socket after part of the body; `truncated` ends a chunked response cleanly after part of it, so only
 * the JSON is broken. `sent` is called once the body is handed to the system (bytes may then be used again).
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: string | Buffer | unknown,
  headers: Record<string, string> = {},
  cut: Cut = undefined,
  sent?: () => void,
): void {
  // encoded once: its length and what is sent (a page's text is long, and may hold a two-byte token name)
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
  if (cut === 'truncated') {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(half(bytes), sent);
    return;
  }
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(bytes.length),
    ...headers,
  });
  if (cut === 'reset') {
    res.write(half(bytes), () => res.destroy());
    return;
  }
  res.end(bytes, sent);
}

function half(bytes: Buffer): Buffer {
  return bytes.subarray(0, Math.floor(bytes.length / 2));
}
