import type { ServerResponse } from 'node:http';
import type { CorruptedAnswer } from './corruptor.ts';
import { sendJson, type Cut } from './http-io.ts';

const PAD = Buffer.alloc(64 * 1024, 'x');

/**
 * Sends a corrupted getTokenTransfers or JSON-RPC answer, always with status 200: a damaged page or answer
 * as JSON (cut like any other answer when a cut fault fires), an HTML error page as `text/html`, or a huge
 * body streamed in 64 KB pieces with backpressure and without a content-length, so the server holds one piece
 * at a time and stops as soon as the client hangs up.
 *
 * @example await sendCorrupted(res, { type: 'huge', page: body, bytes: 50 << 20 }) // → '{…page…,"padding":"xxxx…"}', 50 MB
 */
export async function sendCorrupted(res: ServerResponse, answer: CorruptedAnswer, cut: Cut = undefined): Promise<void> {
  if (answer.type === 'json') return sendJson(res, 200, answer.text, {}, cut);
  if (answer.type === 'html') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(Buffer.byteLength(answer.text)) });
    res.end(answer.text);
    return;
  }
  await streamHugePage(res, answer.page, answer.bytes);
}

/**
 * `page` (the text of a JSON object, or of an array of them: a JSON-RPC batch) with a `"padding"` string in its
 * last object that brings it to `bytes` bytes.
 */
async function streamHugePage(res: ServerResponse, page: string, bytes: number): Promise<void> {
  const end = page.lastIndexOf('}');
  const head = Buffer.from(`${page.slice(0, end)},"padding":"`);
  const tail = Buffer.from(`"${page.slice(end)}`);
  let closed = false;
  res.once('close', () => (closed = true));
  res.writeHead(200, { 'content-type': 'application/json' });
  const write = async (piece: Buffer) => {
    if (!res.write(piece) && !closed) await drainOrClose(res);
  };
  await write(head);
  for (let left = bytes - head.length - tail.length; left > 0 && !closed; left -= PAD.length) {
    await write(left >= PAD.length ? PAD : PAD.subarray(0, left));
  }
  if (!closed) res.end(tail);
}

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
