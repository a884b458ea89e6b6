import path from 'node:path';

/** A file of the repository: its path from the repository root ('/'-separated) and its text. */
export interface RepositoryFile {
  path: string;
  text: string;
}

/** One place where a file reaches outside the repository. */
export interface PathEscape {
  file: string;
  line: number;
  /** 'climbs': a relative path that resolves above the root; 'names-shared': a mention of the shared folder. */
  kind: 'climbs' | 'names-shared';
  what: string;
}

// built from pieces so that this file does not name the folder it looks for
const SHARED_FOLDER = ['..', 'shared'].join('/');

// a quoted string whose text starts with `./` or `../`, or is `..`: up to its closing quote, or up to
// `${` in a template literal (the static prefix is what decides where it climbs)
const RELATIVE_LITERAL = /(['"`])(\.\.?\/[^'"`\n]*?|\.\.)(?=\1|\$\{)/g;
// a plain quoted string, and the comma that may join it to the next argument of a call
const PLAIN_LITERAL = /(['"])([^'"\n]*)\1/y;
const ARGUMENT_SEPARATOR = /\s*,\s*/y;

/**
 * Where FILE names a path outside the repository: a mention of the neighbouring `shared` folder, or a
 * relative path literal (`'../../x'`, `new URL('../..', import.meta.url)`, or the string arguments of
 * `path.join(__dirname, '..', '..')` taken together) that, resolved against the file's own folder,
 * climbs above the repository root. Paths built at run time are not seen.
 */
export function findPathEscapes(file: RepositoryFile): PathEscape[] {
  const folder = path.posix.dirname(file.path);
  const escapes: PathEscape[] = [];
  const linesWithEscape = new Set<number>();
  for (const match of file.text.matchAll(RELATIVE_LITERAL)) {
    const start = match.index + 1;
    const joined = joinFollowingArguments(file.text, start - 1) ?? match[2]!;
    const resolved = path.posix.normalize(path.posix.join(folder, joined));
    if (resolved === '..' || resolved.startsWith('../')) {
      const line = lineOf(file.text, start);
      linesWithEscape.add(line);
      escapes.push({ file: file.path, line, kind: 'climbs', what: `'${joined}' resolves to ${resolved}, outside the repository root` });
    }
  }
  for (const [index, text] of file.text.split('\n').entries()) {
    const line = index + 1;
    if (text.includes(SHARED_FOLDER) && !linesWithEscape.has(line)) {
      escapes.push({ file: file.path, line, kind: 'names-shared', what: `names ${SHARED_FOLDER}, a folder next to the repository that a clone does not have` });
    }
  }
  return escapes.sort((a, b) => a.line - b.line);
}

/**
 * The plain string literal at OFFSET joined with the plain literals that follow it as further arguments
 * (`'..', '..', 'x'` → `../../x`), or undefined when the literal at OFFSET is not a plain one.
 */
function joinFollowingArguments(text: string, offset: number): string | undefined {
  const parts: string[] = [];
  let at = offset;
  for (;;) {
    PLAIN_LITERAL.lastIndex = at;
    const literal = PLAIN_LITERAL.exec(text);
    if (!literal) break;
    parts.push(literal[2]!);
    ARGUMENT_SEPARATOR.lastIndex = PLAIN_LITERAL.lastIndex;
    if (!ARGUMENT_SEPARATOR.exec(text)) break;
    at = ARGUMENT_SEPARATOR.lastIndex;
  }
  return parts.length === 0 ? undefined : path.posix.join(...parts);
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
