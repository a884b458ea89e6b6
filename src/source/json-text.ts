import { isAscii } from 'node:buffer';

/** Bytes scanned per `isAscii` call when looking for the non-ASCII ones: pure-ASCII blocks are skipped whole. */
const BLOCK = 4096;
const BACKSLASH = 0x5c;

/**
 * The text of a UTF-8 JSON body, ready for `JSON.parse`, in as few bytes per character as V8 allows: ASCII bytes
 * are kept as they are, and every other character is written as its `\uXXXX` escape (two for one beyond U+FFFF).
 * `JSON.parse` of it gives what `JSON.parse` of the body decoded as UTF-8 gives. Decoded as UTF-8, one character
 * above U+00FF (a token name's "✓") makes the whole body a string of two bytes per character: twice the memory,
 * decoded and parsed more slowly. Non-ASCII bytes are valid JSON only inside strings, so escaping them changes no
 * meaning; a body where a backslash comes right before them (`"\é"`, never valid) is decoded as it is, so the parser
 * refuses it as it would.
 *
 * Malformed UTF-8 becomes U+FFFD, as it does when decoded.
 *
 * @example JSON.parse(jsonText([Buffer.from('{"name":"Ether ✓"}')])) // → { name: 'Ether ✓' }
 * jsonText([Buffer.from('{"name":"Ether ✓"}')]) // → '{"name":"Ether \\u2713"}'
 */
export function jsonText(chunks: readonly Buffer[]): string {
  const parts: string[] = [];
  // the start of a run of non-ASCII bytes that the previous chunk ended in, and the byte before that run
  let cut: Buffer | undefined;
  let before = -1;
  for (const received of chunks) {
    const chunk = cut ? Buffer.concat([cut, received]) : received;
    cut = undefined;
    if (isAscii(chunk)) {
      parts.push(chunk.toString('latin1'));
      before = chunk.length ? chunk[chunk.length - 1]! : before;
      continue;
    }
    let copied = 0;
    for (let block = 0; block < chunk.length && !cut; block += BLOCK) {
      const end = Math.min(block + BLOCK, chunk.length);
      if (isAscii(chunk.subarray(block, end))) continue;
      for (let i = Math.max(block, copied); i < end; i++) {
        if (chunk[i]! < 0x80) continue;
        let runEnd = i + 1;
        while (runEnd < chunk.length && chunk[runEnd]! >= 0x80) runEnd++;
        if ((i > 0 ? chunk[i - 1] : before) === BACKSLASH) return Buffer.concat(chunks).toString('utf8');
        parts.push(chunk.toString('latin1', copied, i));
        copied = i;
        // a run reaching the chunk's end may go on in the next one: it is decoded with it
        if (runEnd === chunk.length) {
          cut = chunk.subarray(i);
          before = i > 0 ? chunk[i - 1]! : before;
          break;
        }
        parts.push(escaped(chunk.toString('utf8', i, runEnd)));
        copied = runEnd;
        i = runEnd - 1;
      }
    }
    if (cut) continue;
    parts.push(chunk.toString('latin1', copied));
    before = chunk[chunk.length - 1]!;
  }
  if (cut) parts.push(escaped(cut.toString('utf8')));
  return parts.length === 1 ? parts[0]! : parts.join('');
}

/** `\uXXXX` for each UTF-16 unit of `text`. */
function escaped(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) out += `\\u${text.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}
