import { describe, expect, it } from 'vitest';
import { isRetryable } from '../common/errors.ts';
import { classifyPgError, PgTransientError, transientPgFailure } from './pg-errors.ts';

describe('PostgreSQL failures a retry can get past', () => {
  it("names a restart, a dropped connection and a deadlock, and marks them as the warehouse's", () => {
    const restart = classifyPgError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
    expect(restart).toBeInstanceOf(PgTransientError);
    expect(isRetryable(restart)).toBe(true);
    expect((restart as PgTransientError).what).toBe('PostgreSQL reported the server shutting down (admin shutdown) (57P01)');
    expect((restart as Error).message).toBe('PostgreSQL reported the server shutting down (admin shutdown) (57P01); trying again');
    expect(transientPgFailure(new Error('Client has encountered a connection error and is not queryable'))).toBe(
      'lost the connection to PostgreSQL (Client has encountered a connection error and is not queryable)',
    );
    expect(transientPgFailure(Object.assign(new Error('deadlock detected'), { code: '40P01' }))).toBe('PostgreSQL reported a deadlock with another writer (40P01)');
  });

  it('returns any other failure unchanged', () => {
    const unique = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    expect(classifyPgError(unique)).toBe(unique);
    expect(transientPgFailure(unique)).toBeUndefined();
  });
});
