import { ConfigError } from '../common/errors.ts';

/**
 * The chain API's base URL. Its last path segment is the project id, a credential: only `redacted`
 * may ever be logged, printed, thrown or stored.
 */
export interface ApiEndpoint {
  /** The full base URL, without a trailing slash. Secret. */
  readonly base: string;
  /** The base URL with the project id replaced, e.g. `https://mainnet.example/<redacted>`. */
  readonly redacted: string;
  /** Redacts the project id from any text (an error message, a URL, a response body). */
  redact(text: string): string;
}

/**
 * Reads `CHAIN_API_URL` / `--api-url`. The message of a bad value never repeats the value, which may
 * hold the project id.
 *
 * @example parseApiUrl('http://127.0.0.1:8545/demo').redacted // → 'http://127.0.0.1:8545/<redacted>'
 */
export function parseApiUrl(text: string, source = 'CHAIN_API_URL (or --api-url)'): ApiEndpoint {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ConfigError(`${source} is not a URL: expected the base URL including the project id, like https://<network>.<provider>/<project-id>`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`${source} must be an http(s) URL, got the scheme ${url.protocol}`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`${source} must be a plain base URL ending in the project id, without query, fragment or user info`);
  }
  const segments = url.pathname.split('/').filter(Boolean);
  const projectId = segments.at(-1);
  if (!projectId) {
    throw new ConfigError(`${source} has no project id: expected a base URL that ends in it, like https://<network>.<provider>/<project-id>`);
  }
  const base = `${url.origin}/${segments.join('/')}`;
  const redacted = `${url.origin}/${[...segments.slice(0, -1), '<redacted>'].join('/')}`;
  const variants = [...new Set([projectId, encodeURIComponent(projectId), decodeURIComponentSafe(projectId)])].filter((v) => v.length > 0);
  return Object.freeze({
    base,
    redacted,
    redact: (value: string) => variants.reduce((out, secret) => out.split(secret).join('<redacted>'), value),
  });
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
