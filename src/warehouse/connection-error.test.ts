import { describe, expect, it } from 'vitest';
import { ConfigError } from '../common/errors.ts';
import { describeConnectionError } from './db.ts';

describe('describeConnectionError', () => {
  it('tells a URL asking for SSL of a server without it to drop sslmode or turn SSL on (exit 2, not a stack trace)', () => {
    const err = describeConnectionError(new Error('The server does not support SSL connections'));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(
      'Cannot use the database: DATABASE_URL asks for SSL (sslmode=require, verify-ca or verify-full) and the server does not accept SSL connections: drop sslmode from the URL, or turn SSL on in the server.',
    );
  });

  it('names a database that does not exist', () => {
    const err = describeConnectionError(Object.assign(new Error('database "nope" does not exist'), { code: '3D000' }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/the database named in DATABASE_URL does not exist/);
  });
});
