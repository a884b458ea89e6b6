import { describe, expect, it } from 'vitest';
import { ConfigError } from '../common/errors.ts';
import { parseApiUrl } from './api-url.ts';

describe('parseApiUrl', () => {
  it('keeps the base URL and redacts the project id', () => {
    const api = parseApiUrl('https://mainnet.example.org/v3/s3cr3t-id/');
    expect(api.base).toBe('https://mainnet.example.org/v3/s3cr3t-id');
    expect(api.redacted).toBe('https://mainnet.example.org/v3/<redacted>');
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
});
