import { describe, expect, it } from 'vitest';
import { parseApiUrl } from '../config/api-url.ts';
import { endpointRequests } from './http-client.ts';

const node = (url: string) => endpointRequests(parseApiUrl(url, undefined, 'node'));

describe('endpointRequests', () => {
  it('sends the base path, and the path of a request below it, as before', () => {
    const builder = endpointRequests(parseApiUrl('https://mainnet.example.org/v3/proj-id'));
    expect(builder).toEqual({ origin: 'https://mainnet.example.org', requestPath: expect.any(Function), authorization: undefined });
    expect(builder.requestPath('')).toBe('/v3/proj-id');
    expect(builder.requestPath('/builder/getTokenTransfers?contractAddress=0xa0')).toBe('/v3/proj-id/builder/getTokenTransfers?contractAddress=0xa0');
  });

  it('asks `/` of a node without a path: a request must name one', () => {
    expect(node('http://127.0.0.1:8545').requestPath('')).toBe('/');
  });

  it('sends the query of the URL with every request, after the request’s own', () => {
    const withKey = node('https://node.example/v1?apikey=s3cr3t&chain=eth');
    expect(withKey.origin).toBe('https://node.example');
    expect(withKey.requestPath('')).toBe('/v1?apikey=s3cr3t&chain=eth');
    expect(withKey.requestPath('/builder/getTokenTransfers?contractAddress=0xa0')).toBe('/v1/builder/getTokenTransfers?contractAddress=0xa0&apikey=s3cr3t&chain=eth');
    expect(node('http://127.0.0.1:8545/?key=k%2By').requestPath('')).toBe('/?key=k%2By');
    expect(withKey.authorization).toBeUndefined();
  });

  it('sends user info as HTTP Basic auth, decoded, and never in the path', () => {
    const basic = (header: string | undefined) => Buffer.from(header!.replace(/^Basic /, ''), 'base64').toString('utf8');
    const user = node('https://pr0ject:s3cr3t%40pass@node.example/v2');
    expect(user.origin).toBe('https://node.example');
    expect(user.requestPath('')).toBe('/v2');
    expect(user.authorization).toMatch(/^Basic [A-Za-z0-9+/]+=*$/);
    expect(basic(user.authorization)).toBe('pr0ject:s3cr3t@pass');
    expect(basic(node('https://:k3y@node.example').authorization)).toBe(':k3y');
    expect(basic(node('https://k3y@node.example').authorization)).toBe('k3y:');
  });
});
