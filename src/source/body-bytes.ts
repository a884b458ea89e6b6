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
 * Reads `stream` to its end: its bytes as one buffer, or several pieces in order; undefined as soon as they pass
 * `limit` (the caller destroys the stream).
 *
 * @example await collectBody(stream, 5, 1024) // → [<Buffer 68 65 6c 6c 6f>]
 */
export async function collectBody(stream: AsyncIterable<Buffer>, declared: number | undefined, limit: number): Promise<Buffer[] | undefined> {
  const whole = declared !== undefined && declared > 0 && declared <= limit ? Buffer.allocUnsafe(declared) : undefined;
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
