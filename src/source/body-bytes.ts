/**
 * A response body's bytes as they come. A body of a known length is copied into one buffer as it arrives, so its
 * pieces can be collected at once (a node answer is megabytes, and several are in flight) and the parser gets it
 * whole without joining them; a body of unknown length, or one that runs past what it declared, is kept in pieces.
 */

/** The `content-length` header as a number of bytes, or undefined when it is missing or not one. */
export function declaredLength(header: string | string[] | undefined): number | undefined {
  return typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
}

/**
 * Buffers for bodies of known length, used again from one answer to the next. Each body a node source reads is
 * megabytes (an `eth_getLogs` answer of 10,000 logs is about 7 MB), and memory that large is a mapping of its own:
 * a fresh one for every answer faults in every page of it as the body is copied in. Copying 150 answers of 7 MB
 * took 120–670 ms into fresh buffers and 12–23 ms into one used again (this machine, Node 20); in a node source's
 * first load of 1,000,000 transfers the copy was 1.1 s of the exporter's CPU.
 */
export interface BodyBuffers {
  /** A buffer of `size` bytes (its contents are old bytes, to be written over). */
  take(size: number): Buffer;
  /** The pieces of a body read (`collectBody`) and parsed: a buffer `take` lent goes back to be used again. */
  give(pieces: readonly Buffer[]): void;
}

/**
 * Bodies smaller than this are allocated as they come (a builder page of about 330 KB, a batch of headers): the gain
 * measured was for node answers of megabytes, and builder loads, whose peak RSS is close to its 200 MB target,
 * reached 198–205 MB at 1,000,000 transfers in two bench runs while bodies from 64 KB were kept (189–200 MB on earlier
 * days).
 */
const SMALLEST_KEPT = 1024 * 1024;

/**
 * Body buffers that keep at most `keepBytes` of free buffers between answers (each a power of two of at least
 * 1 MB, lent only to bodies of its size class, so answers of about the same size share them); a buffer given back
 * past that is left to the collector.
 *
 * @example const buffers = createBodyBuffers(32 << 20);
 * const body = await collectBody(stream, declared, limit, buffers);
 * try { parse(body) } finally { buffers.give(body) }
 */
export function createBodyBuffers(keepBytes: number): BodyBuffers {
  const free: Buffer[] = [];
  let freeBytes = 0;
  // what was lent, by the memory its pieces are views of
  const lent = new WeakMap<ArrayBufferLike, Buffer>();
  return {
    take(size) {
      if (size < SMALLEST_KEPT) return Buffer.allocUnsafe(size);
      // a free buffer of the body's size class, never a larger one (a small body would hold a large answer's memory)
      const capacity = 2 ** Math.ceil(Math.log2(size));
      const at = free.findIndex((b) => b.length === capacity);
      let buffer: Buffer;
      if (at >= 0) {
        buffer = free.splice(at, 1)[0]!;
        freeBytes -= buffer.length;
      } else buffer = Buffer.allocUnsafeSlow(capacity);
      lent.set(buffer.buffer, buffer);
      return buffer.subarray(0, size);
    },
    give(pieces) {
      for (const piece of pieces) {
        const buffer = lent.get(piece.buffer);
        if (!buffer) continue;
        lent.delete(piece.buffer);
        if (freeBytes + buffer.length > keepBytes) continue;
        free.push(buffer);
        freeBytes += buffer.length;
      }
    },
  };
}

/**
 * Reads `stream` to its end: its bytes as one buffer (from `buffers`, when given), or several pieces in order;
 * undefined as soon as they pass `limit` (the caller destroys the stream).
 *
 * @example await collectBody(stream, 5, 1024) // → [<Buffer 68 65 6c 6c 6f>]
 */
export async function collectBody(stream: AsyncIterable<Buffer>, declared: number | undefined, limit: number, buffers?: BodyBuffers): Promise<Buffer[] | undefined> {
  const whole = declared !== undefined && declared > 0 && declared <= limit ? (buffers ? buffers.take(declared) : Buffer.allocUnsafe(declared)) : undefined;
  const pieces: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    if (size + chunk.length > limit) return undefined;
    if (whole && !pieces.length && size + chunk.length <= whole.length) chunk.copy(whole, size);
    else {
      // more than it declared: in pieces from here on, after what was copied
      if (whole && !pieces.length && size > 0) pieces.push(whole.subarray(0, size));
      pieces.push(chunk);
    }
    size += chunk.length;
  }
  if (pieces.length) return pieces;
  return whole && size > 0 ? [whole.subarray(0, size)] : [];
}
