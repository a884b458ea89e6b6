import { ConfigError } from '../common/errors.ts';
import type { SourceKind } from './job-schema.ts';

/**
 * The endpoint a source reads: the chain API's base URL (a builder source), or a node's JSON-RPC URL (a node
 * source). Either may hold a credential: only `redacted` may ever be logged, printed, thrown or stored, and
 * `host` (which names no key) in the warehouse.
 */
export interface ApiEndpoint {
  /** The full base URL, without a trailing slash. Secret. */
  readonly base: string;
  /** The base URL with the credential replaced, e.g. `https://mainnet.example/<redacted>`. */
  readonly redacted: string;
  /** The URL's host and port, e.g. `mainnet.example` or `127.0.0.1:8545`: what a learned `eth_getLogs` range is kept for. */
  readonly host: string;
  /** Redacts the credential from any text (an error message, a URL, a response body). */
  redact(text: string): string;
}

/** Shorter parts of a node URL's path are route words (`v2`, `eth`, `rpc`), not keys: left in text, which they would garble. */
const MIN_KEY_LENGTH = 4;

/**
 * Reads `CHAIN_API_URL` / `--api-url`. The message of a bad value never repeats the value, which may hold a
 * key. For a builder source (the default) the last path segment is the project id; for a node source the
 * path may be empty (a node of your own) or hold a provider's key anywhere (`/v2/KEY`, `/KEY/`): the whole
 * path is redacted, and every part of it of 4 characters or more wherever it appears.
 *
 * @example parseApiUrl('http://127.0.0.1:8545/demo').redacted // → 'http://127.0.0.1:8545/<redacted>'
 * @example parseApiUrl('https://eth.example/v2/KEY', undefined, 'node').redacted // → 'https://eth.example/<redacted>'
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
  if (node && (url.search || url.hash || url.username || url.password)) {
    // requests go to the URL's path alone: a key in the query or in user info would be dropped
    throw new ConfigError(
      `${source} must be the node's JSON-RPC URL without query, fragment or user info: a key must be in the path, like https://<provider>/<key> (a key in ?query or user:password@ is not supported)`,
    );
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`${source} must be a plain base URL ending in the project id, without query, fragment or user info`);
  }
  const segments = url.pathname.split('/').filter(Boolean);
  const base = segments.length ? `${url.origin}/${segments.join('/')}` : url.origin;
  if (node) return nodeEndpoint(url, base, segments);
  const projectId = segments.at(-1);
  if (!projectId) {
    throw new ConfigError(`${source} has no project id: expected a base URL that ends in it, like https://<network>.<provider>/<project-id>`);
  }
  const redacted = `${url.origin}/${[...segments.slice(0, -1), '<redacted>'].join('/')}`;
  const variants = secretVariants([projectId]);
  return Object.freeze({ base, redacted, host: url.host, redact: (value: string) => replaceAll(value, variants) });
}

/** A node's URL: the whole path may be a key (or hold one), so all of it goes. */
function nodeEndpoint(url: URL, base: string, segments: readonly string[]): ApiEndpoint {
  if (!segments.length) return Object.freeze({ base, redacted: base, host: url.host, redact: (value: string) => value });
  const path = `/${segments.join('/')}`;
  const paths = secretVariants([path]);
  const parts = secretVariants(segments.filter((s) => s.length >= MIN_KEY_LENGTH));
  return Object.freeze({
    base,
    redacted: `${url.origin}/<redacted>`,
    host: url.host,
    redact: (value: string) =>
      replaceAll(
        paths.reduce((out, secret) => out.split(secret).join('/<redacted>'), value),
        parts,
      ),
  });
}

/** Each secret as written, percent-encoded and decoded, longest first (so a longer one is never cut by a shorter). */
function secretVariants(secrets: readonly string[]): string[] {
  const all = secrets.flatMap((s) => [s, encodeURIComponent(s), encodeURI(s), decodeURIComponentSafe(s)]);
  return [...new Set(all)].filter((v) => v.length > 0).sort((a, b) => b.length - a.length);
}

function replaceAll(value: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => out.split(secret).join('<redacted>'), value);
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
