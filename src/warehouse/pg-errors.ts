import { RetryableError } from '../common/errors.ts';

/** SQLSTATEs after which the same transaction, tried again, can succeed. */
const TRANSIENT_STATES: Record<string, string> = {
  '40001': 'a serialization failure',
  '40P01': 'a deadlock with another writer',
  '57P01': 'the server shutting down (admin shutdown)',
  '57P02': 'the server crashing',
  '57P03': 'the server not accepting connections yet',
  '53300': 'too many connections',
};

const TRANSIENT_NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/**
 * What a PostgreSQL failure that a retry can get past (a deadlock, a restart, a dropped connection) was, in words;
 * undefined for any other failure.
 *
 * @example transientPgFailure({ code: '57P01', message: 'terminating connection due to administrator command' })
 * // → 'PostgreSQL reported the server shutting down (admin shutdown) (57P01)'
 */
export function transientPgFailure(err: unknown): string | undefined {
  const e = err as { code?: string; message?: string };
  const message = e?.message ?? String(err);
  const state = e?.code && TRANSIENT_STATES[e.code];
  if (state) return `PostgreSQL reported ${state} (${e.code})`;
  if (
    (e?.code && TRANSIENT_NETWORK.has(e.code)) ||
    (e?.code?.startsWith('08') ?? false) ||
    /Connection terminated|connection is closed|Client has encountered a connection error/i.test(message)
  ) {
    return `lost the connection to PostgreSQL (${e?.code ?? message})`;
  }
  return undefined;
}

/** A PostgreSQL failure a retry can get past, as the retry policy sees it; `what` says what it was. */
export class PgTransientError extends RetryableError {
  constructor(
    readonly what: string,
    cause: unknown,
  ) {
    super(`${what}; trying again`, undefined, { cause });
  }
}

/**
 * A PostgreSQL failure that a retry can get past becomes a PgTransientError that says what happened
 * (`transientPgFailure`); anything else is returned unchanged.
 */
export function classifyPgError(err: unknown): unknown {
  const what = transientPgFailure(err);
  return what === undefined ? err : new PgTransientError(what, err);
}

/** Whether PostgreSQL refused a statement for a privilege the role lacks (SQLSTATE 42501): no retry can help, a grant can. */
export function lacksPrivilege(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === '42501';
}

/** Whether an error means the connection it came from is no longer usable. */
export function brokenConnection(err: unknown): boolean {
  const cause = (err as { cause?: unknown })?.cause ?? err;
  const e = cause as { code?: string; message?: string };
  return Boolean(
    (e?.code && (TRANSIENT_NETWORK.has(e.code) || e.code.startsWith('08') || e.code.startsWith('57P'))) ||
      /Connection terminated|connection is closed|connection error/i.test(e?.message ?? ''),
  );
}
