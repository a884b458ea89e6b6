/** C0 and C1 control characters and DEL: what a terminal may take for a command (colours, the title, the bell). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what these find
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what these find
const CONTROL_OR_LINE = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * Text from outside (a token's symbol, a provider's error message) made safe to print on a terminal: every control
 * character becomes its `\uXXXX` escape, so a token named with escape sequences cannot recolour, retitle or clear the
 * operator's terminal. Tabs and newlines are kept with `lines` (a message of several lines), escaped otherwise.
 *
 * @example printable('\u001b[31mRED\u001b[0m') // → '\\u001b[31mRED\\u001b[0m'
 */
export function printable(text: string, options: { lines?: boolean } = {}): string {
  return text.replace(options.lines ? CONTROL : CONTROL_OR_LINE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A message of several lines on one line, as a status line shows it: each line break (and the indentation around it)
 * becomes one space; the rest as `printable` writes it.
 *
 * @example printableLine('Bad page (1 problem):\n  contract 0xa…: bad address') // → 'Bad page (1 problem): contract 0xa…: bad address'
 */
export function printableLine(text: string): string {
  return printable(text.replace(/[ \t]*\r?\n[ \t]*/g, ' '));
}
