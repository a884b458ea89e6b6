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
 * Sends a JSON body. A `cut` response is damaged on purpose: `reset` destroys the socket after part of
 * the body; `truncated` ends a chunked response cleanly after part of it, so only the JSON is broken.
 */
export function sendJson(res: ServerResponse, status: number, body: string | unknown, headers: Record<string, string> = {}, cut: Cut = undefined): void {
  // encoded once: its length and what is sent (a page's text is long, and may hold a two-byte token name)
  const bytes = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
  if (cut === 'truncated') {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(half(bytes));
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
  res.end(bytes);
}

function half(bytes: Buffer): Buffer {
  return bytes.subarray(0, Math.floor(bytes.length / 2));
}
