import { ConfigError } from '../common/errors.ts';
import type { SourceKind } from './job-schema.ts';

/**
 * The endpoint a source reads: the chain API's base URL (a builder source), or a node's JSON-RPC URL (a node
 * source). Either may hold a credential: only `redacted` may ever be logged, printed, thrown or stored, and
 * `host` (which names no key) in the warehouse.
 */
export interface ApiEndpoint {
  /**
   * The full base URL, without a trailing slash: for a node, with its query and user info as given (the client
   * sends the query with every request, and user info as HTTP Basic auth). Secret.
   */
  readonly base: string;
  /** The base URL with the credential replaced, e.g. `https://mainnet.example/<redacted>`. */
  readonly redacted: string;
  /** The URL's host and port, e.g. `mainnet.example` or `127.0.0.1:8545`: what a learned `eth_getLogs` range is kept for. */
  readonly host: string;
  /** Redacts the credential from any text (an error message, a URL, a response body). */
  redact(text: string): string;
}

/**
 * Shorter parts of a node URL's path are route words (`v2`, `eth`, `rpc`), not keys: left in text, which they would
 * garble; so are shorter query values and user names or passwords (the whole query and path are redacted all the same).
 */
const MIN_KEY_LENGTH = 4;

/**
 * Reads `CHAIN_API_URL` / `--api-url`. The message of a bad value never repeats the value, which may hold a
 * key. For a builder source (the default) the last path segment is the project id, and the URL is nothing but
 * the base. For a node source the path may be empty (a node of your own) or hold a provider's key anywhere
 * (`/v2/KEY`, `/KEY/`), and a key may also be in the query (`?apikey=KEY`) or in user info
 * (`https://user:KEY@host/`): the whole path and query are redacted, and every part of the path, every query
 * value and the user name and password of 4 characters or more, wherever they appear.
 *
 * @example parseApiUrl('http://127.0.0.1:8545/demo').redacted // → 'http://127.0.0.1:8545/<redacted>'
 * @example parseApiUrl('https://eth.example/v2/KEY', undefined, 'node').redacted // → 'https://eth.example/<redacted>'
 * @example parseApiUrl('https://eth.example/?apikey=KEY', undefined, 'node').base // → 'https://eth.example?apikey=KEY'
 */
export function parseApiUrl(text: string, source = 'CHAIN_API_URL (or --api-url)', kind: SourceKind = 'builder'): ApiEndpoint {
  const node = kind === 'node';
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ConfigError(
      node
        ? `${source} is not a URL: expected the node's JSON-RPC URL, like https://<provider>/<key> or http://127.0.0.1:8545`
        : `${source} is not a URL: expected the base URL including the project id, like https://<network>.<provider>/<project-id>`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`${source} must be an http(s) URL, got the scheme ${/^[a-z][a-z0-9+.-]*:$/i.test(url.protocol) ? url.protocol : '(unreadable)'}`);
  }
  if (node && url.hash) {
    // a fragment is never sent: a key there would be lost
    throw new ConfigError(`${source} must be the node's JSON-RPC URL without a fragment (#…): a key goes in the path, the query or user info`);
  }
  if (!node && (url.search || url.hash || url.username || url.password)) {
    throw new ConfigError(`${source} must be a plain base URL ending in the project id, without query, fragment or user info`);
  }
  const segments = url.pathname.split('/').filter(Boolean);
  if (node) return nodeEndpoint(url, segments);
  const projectId = segments.at(-1);
  if (!projectId) {
    throw new ConfigError(`${source} has no project id: expected a base URL that ends in it, like https://<network>.<provider>/<project-id>`);
  }
  const base = `${url.origin}/${segments.join('/')}`;
  const redacted = `${url.origin}/${[...segments.slice(0, -1), '<redacted>'].join('/')}`;
  const variants = secretVariants([projectId]);
  return Object.freeze({ base, redacted, host: url.host, redact: (value: string) => replaceAll(value, variants) });
}

/**
 * A node's URL: the whole path may be a key (or hold one), and so may the query and user info: all of them go.
 * The base keeps them as given (the URL parser's encoding), so the client can send them.
 */
function nodeEndpoint(url: URL, segments: readonly string[]): ApiEndpoint {
  const path = segments.length ? `/${segments.join('/')}` : '';
  const query = url.search.slice(1);
  const userInfo = url.username || url.password ? `${url.username}${url.password ? `:${url.password}` : ''}` : '';
  const base = `${url.protocol}//${userInfo ? `${userInfo}@` : ''}${url.host}${path}${query ? `?${query}` : ''}`;
  if (!path && !query && !userInfo) return Object.freeze({ base, redacted: base, host: url.host, redact: (value: string) => value });
  const paths = path ? secretVariants([path]) : [];
  // the Basic auth credentials too, as sent, should a server repeat its Authorization header
  const credentials = basicCredentials(url) ?? '';
  const parts = secretVariants([...segments, ...queryParts(query), url.username, url.password, userInfo, query, credentials].filter((s) => s.length >= MIN_KEY_LENGTH));
  return Object.freeze({
    base,
    redacted: `${url.origin}/<redacted>`,
    host: url.host,
    redact: (value: string) =>
      replaceAll(
        paths.reduce((out, secret) => replaceIgnoringCase(out, secret, '/<redacted>'), value),
        parts,
      ),
  });
}

/**
 * The credentials of HTTP Basic auth for a URL's user info (`user:password`, each decoded, in base64), or
 * undefined when it has none. Secret.
 *
 * @example basicCredentials(new URL('https://u:k3y@eth.example/')) // → 'dTprM3k='
 */
export function basicCredentials(url: URL): string | undefined {
  if (!url.username && !url.password) return undefined;
  return Buffer.from(`${decodeURIComponentSafe(url.username)}:${decodeURIComponentSafe(url.password)}`, 'utf8').toString('base64');
}

/**
 * The parts of a query that may be keys: each value (`apikey=KEY` → `KEY`), and each part without `=` whole
 * (`?KEY`). Names are route words, like path parts shorter than 4 characters: left in text.
 */
function queryParts(query: string): string[] {
  return query
    .split('&')
    .map((part) => (part.includes('=') ? part.slice(part.indexOf('=') + 1) : part))
    .flatMap((part) => [part, decodeURIComponentSafe(part.replaceAll('+', ' '))]);
}

/** Each secret as written, percent-encoded and decoded, longest first (so a longer one is never cut by a shorter). */
function secretVariants(secrets: readonly string[]): string[] {
  const all = secrets.flatMap((s) => [s, encodeURIComponent(s), encodeURI(s), decodeURIComponentSafe(s)]);
  return [...new Set(all)].filter((v) => v.length > 0).sort((a, b) => b.length - a.length);
}

/** Marks a message puts where it cut a quoted value short (`show`'s `...`, or `…`). */
const CUT_MARKS = ['...', '…'];

/**
 * Each secret replaced by `<redacted>`; and the start of one (4 characters or more) where a message cut it short, just
 * before a cut mark: a provider's text quoted and shortened before anything redacted it must not keep most of a key.
 * Case is ignored: a provider may echo a path or a key in capitals.
 */
function replaceAll(value: string, secrets: readonly string[]): string {
  let out = secrets.reduce((text, secret) => replaceIgnoringCase(text, secret, '<redacted>'), value);
  if (!CUT_MARKS.some((mark) => out.includes(mark))) return out;
  for (const secret of secrets) {
    for (let length = secret.length - 1; length >= MIN_KEY_LENGTH; length--) {
      const start = secret.slice(0, length);
      for (const mark of CUT_MARKS) out = replaceIgnoringCase(out, `${start}${mark}`, `<redacted>${mark}`);
    }
  }
  return out;
}

/** `text` with every occurrence of `secret`, in any case, replaced by `by`. */
function replaceIgnoringCase(text: string, secret: string, by: string): string {
  if (!text.toLowerCase().includes(secret.toLowerCase())) return text;
  return text.replace(new RegExp(secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'), () => by);
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * `err` with its message (and stack) passed through `endpoint.redact`: the last guard of a command before it prints
 * a failure, behind the redaction of every message built from an answer (`redactAnswerErrors`, `httpStatusError`).
 *
 * @example throw redactedError(err, api) // err.message 'bad key /v2/KEY' → 'bad key /<redacted>'
 */
export function redactedError(err: unknown, endpoint: Pick<ApiEndpoint, 'redact'>): unknown {
  if (!(err instanceof Error)) return err;
  const clean = endpoint.redact(err.message);
  if (clean === err.message) return err;
  err.message = clean;
  if (err.stack) err.stack = endpoint.redact(err.stack);
  return err;
}
