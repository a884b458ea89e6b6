import { describe, expect, it } from 'vitest';
import { ConfigError } from '../common/errors.ts';
import { parseApiUrl, redactedError } from './api-url.ts';

describe('parseApiUrl', () => {
  it('keeps the base URL and redacts the project id', () => {
    const api = parseApiUrl('https://mainnet.example.org/v3/s3cr3t-id/');
    expect(api.base).toBe('https://mainnet.example.org/v3/s3cr3t-id');
    expect(api.redacted).toBe('https://mainnet.example.org/v3/<redacted>');
    expect(api.host).toBe('mainnet.example.org');
    expect(api.redact('GET https://mainnet.example.org/v3/s3cr3t-id/builder failed for s3cr3t-id')).toBe(
      'GET https://mainnet.example.org/v3/<redacted>/builder failed for <redacted>',
    );
  });

  it('refuses a URL without a project id, a query or another scheme, without echoing the value', () => {
    for (const bad of ['https://mainnet.example.org/', 'https://h/abc?key=s3cr3t', 'ftp://h/s3cr3t', 'not a url s3cr3t']) {
      const err = (() => {
        try {
          parseApiUrl(bad);
        } catch (e) {
          return e as ConfigError;
        }
        throw new Error(`accepted ${bad}`);
      })();
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).not.toContain('s3cr3t');
      expect(err.message).toMatch(/CHAIN_API_URL/);
    }
  });

  describe('a node source', () => {
    it('takes a node of your own without a path, with nothing to redact', () => {
      const api = parseApiUrl('http://127.0.0.1:8545/', undefined, 'node');
      expect(api.base).toBe('http://127.0.0.1:8545');
      expect(api.redacted).toBe('http://127.0.0.1:8545');
      expect(api.host).toBe('127.0.0.1:8545');
      expect(api.redact('eth_getLogs failed at http://127.0.0.1:8545')).toBe('eth_getLogs failed at http://127.0.0.1:8545');
    });

    it('redacts the whole path, and each part of it of 4 characters or more wherever it appears', () => {
      const api = parseApiUrl('https://eth-mainnet.example.com/v2/s3cr3t-key/', undefined, 'node');
      expect(api.base).toBe('https://eth-mainnet.example.com/v2/s3cr3t-key');
      expect(api.redacted).toBe('https://eth-mainnet.example.com/<redacted>');
      expect(api.host).toBe('eth-mainnet.example.com');
      expect(api.redact('POST https://eth-mainnet.example.com/v2/s3cr3t-key failed: unknown key s3cr3t-key (v2, eth_getLogs)')).toBe(
        'POST https://eth-mainnet.example.com/<redacted> failed: unknown key <redacted> (v2, eth_getLogs)',
      );
      const encoded = parseApiUrl('https://node.example/k%40y-with-at', undefined, 'node');
      expect(encoded.redact('k@y-with-at and k%40y-with-at')).toBe('<redacted> and <redacted>');
      // a key anywhere in the path, not only at its end
      const quicknode = parseApiUrl('https://name.example.pro/0123456789abcdef/eth', undefined, 'node');
      expect(quicknode.redact('GET /0123456789abcdef/eth: 0123456789abcdef')).toBe('GET /<redacted>: <redacted>');
      // echoed in another case, or with characters a pattern would read as its own
      const shouting = parseApiUrl('https://node.example/v2/Xy9SecretKey.q+7?apikey=Ab(cd)Ef$1', undefined, 'node');
      expect(shouting.redact('PATH=/V2/XY9SECRETKEY.Q+7 KEY=AB(CD)EF$1 key xy9secretkey.q+7...')).toBe('PATH=/<redacted> KEY=<redacted> key <redacted>...');
      expect(shouting.redact('XY9SECRETKEYxq+7 ab(cd)ef')).toBe('XY9SECRETKEYxq+7 ab(cd)ef');
    });

    it('keeps a key in the query or in user info for the client to send, and redacts it, the host alone left', () => {
      const query = parseApiUrl('https://node.example/v1/?apikey=s3cr3t-key&chain=eth', undefined, 'node');
      expect(query.base).toBe('https://node.example/v1?apikey=s3cr3t-key&chain=eth');
      expect(query.redacted).toBe('https://node.example/<redacted>');
      expect(query.host).toBe('node.example');
      expect(query.redact('POST https://node.example/v1?apikey=s3cr3t-key&chain=eth: bad key s3cr3t-key (eth)')).toBe(
        'POST https://node.example/<redacted>?<redacted>: bad key <redacted> (eth)',
      );
      // a key alone in the query, percent-encoded or not; no path
      const bare = parseApiUrl('http://127.0.0.1:8545?k3y%2Bv4lue', undefined, 'node');
      expect(bare.base).toBe('http://127.0.0.1:8545?k3y%2Bv4lue');
      expect(bare.redacted).toBe('http://127.0.0.1:8545/<redacted>');
      expect(bare.redact('k3y+v4lue and k3y%2Bv4lue')).toBe('<redacted> and <redacted>');

      const user = parseApiUrl('https://pr0ject:s3cr3t%40pass@node.example/', undefined, 'node');
      expect(user.base).toBe('https://pr0ject:s3cr3t%40pass@node.example');
      expect(user.redacted).toBe('https://node.example/<redacted>');
      expect(user.host).toBe('node.example');
      expect(user.redact('https://pr0ject:s3cr3t%40pass@node.example refused pr0ject (s3cr3t@pass)')).toBe('https://<redacted>@node.example refused <redacted> (<redacted>)');
      const all = parseApiUrl('https://:p4ssword@node.example/v2/k3y-in-path?apikey=k3y-in-query', undefined, 'node');
      expect(all.base).toBe('https://:p4ssword@node.example/v2/k3y-in-path?apikey=k3y-in-query');
      expect(all.redact(all.base)).toBe('https://<redacted>@node.example/<redacted>?<redacted>');
      for (const secret of ['p4ssword', 'k3y-in-path', 'k3y-in-query']) expect(all.redact(`${secret}!`)).toBe('<redacted>!');
    });

    it('refuses a fragment or another scheme, without echoing the value, naming the setting', () => {
      for (const bad of ['https://node.example/v1#s3cr3t', 'ws://node.example/s3cr3t', 'not a url s3cr3t']) {
        const err = (() => {
          try {
            parseApiUrl(bad, '--api-url', 'node');
          } catch (e) {
            return e as ConfigError;
          }
          throw new Error(`accepted ${bad}`);
        })();
        expect(err).toBeInstanceOf(ConfigError);
        expect(err.message).not.toContain('s3cr3t');
        expect(err.message).toMatch(/^--api-url /);
      }
    });

    it('a builder URL still refuses a query or user info: the project id is its last path segment', () => {
      for (const bad of ['https://h/v3/id?apikey=s3cr3t', 'https://user:s3cr3t@h/v3/id']) {
        expect(() => parseApiUrl(bad), bad).toThrow(/must be a plain base URL ending in the project id, without query, fragment or user info$/);
      }
    });
  });
});

describe('redactedError', () => {
  const api = parseApiUrl('https://node.example/v3/KEY-0123456789', undefined, 'node');
  it('redacts an error’s message and stack in place, and leaves other errors and values as they are', () => {
    const err = new Error('bad key /v3/KEY-0123456789');
    expect(redactedError(err, api)).toBe(err);
    expect(err.message).toBe('bad key /<redacted>');
    expect(err.stack).not.toContain('KEY-0123456789');
    const clean = new Error('nothing secret');
    const stack = clean.stack;
    expect(redactedError(clean, api)).toBe(clean);
    expect(clean.stack).toBe(stack);
    expect(redactedError('KEY-0123456789', api)).toBe('KEY-0123456789');
  });
});

describe('redact, after a message cut a key short', () => {
  it('redacts the start of a key (4 characters or more) just before a cut mark, and leaves shorter starts and other text', () => {
    const api = parseApiUrl('https://node.example/rpc?apikey=KEY-0123456789', undefined, 'node');
    expect(api.redact('got "invalid key for /rpc?apikey=KEY-01234...')).toBe('got "invalid key for /<redacted>?<redacted>...');
    expect(api.redact('got "bad KEY-0123…')).toBe('got "bad <redacted>…');
    expect(api.redact('got "bad KEY...')).toBe('got "bad KEY...');
    expect(api.redact('KEY-0123 without a cut')).toBe('KEY-0123 without a cut');
  });
});
