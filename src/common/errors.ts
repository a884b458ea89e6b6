/**
 * The one error module. Every error the tool raises is an `EtlError`: its message says what went wrong and
 * what to do next, and `retryable` says whether trying again can help; the one retry policy
 * (`withRetry`, in `retry.ts`) decides from that alone, for HTTP, JSON-RPC and PostgreSQL alike, and so do
 * the queue's workers. `shortMessage` is the first line (what went wrong), `details` what a log or a test may
 * want beside it, `cause` the error underneath.
 */
export interface EtlErrorOptions {
  cause?: unknown;
  details?: Record<string, unknown>;
  /** Whether trying the same thing again can help; no by default. */
  retryable?: boolean;
  /** With `retryable`: wait at least this long first (a `Retry-After`). */
  retryAfterMs?: number | undefined;
}

export class EtlError extends Error {
  /** Process exit code when this error ends a command. */
  readonly exitCode: number = 1;
  /** Whether trying the same thing again can help. */
  readonly retryable: boolean;
  /** When retryable: the least wait before the next try that the other side asked for. */
  readonly retryAfterMs: number | undefined;
  /** Facts about the failure beside the message (a status, a block, a contract, …). */
  readonly details: Readonly<Record<string, unknown>>;
  constructor(message: string, options: EtlErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
    this.details = Object.freeze({ ...options.details });
  }

  /** What went wrong, in one line: the message's first line. */
  get shortMessage(): string {
    return this.message.split('\n', 1)[0] ?? this.message;
  }
}

/** Whether `err` says that a retry can help; anything that is not an `EtlError` (a bug) says it cannot. */
export function isRetryable(err: unknown): err is EtlError {
  return err instanceof EtlError && err.retryable;
}

/** A failure that may pass: a timeout, a reset, a 429 or 5xx, a lagging node, a deadlock. */
export class RetryableError extends EtlError {
  constructor(message: string, retryAfterMs?: number, options?: Omit<EtlErrorOptions, 'retryable' | 'retryAfterMs'>) {
    super(message, { ...options, retryable: true, retryAfterMs });
  }
}

/** A failure that repeats however often it is tried: bad input, bad credentials, bad data. */
export class FatalError extends EtlError {
  constructor(message: string, options?: Omit<EtlErrorOptions, 'retryable' | 'retryAfterMs'>) {
    super(message, { ...options, retryable: false });
  }
}

/**
 * A run stopped by a signal (Ctrl-C, or a scheduler's SIGTERM): the pages being written were finished, those still
 * on their way from the source dropped (none of their rows was written), no page asked for after it, and the run's
 * ledger says so. Exits 128 + the signal's number, as a shell reports a process it stopped.
 */
export class InterruptedError extends FatalError {
  override readonly exitCode: number;
  constructor(signal: 'SIGINT' | 'SIGTERM') {
    super(
      `stopped by ${signal}: pages being written were finished, pages still on their way were dropped, and no page was asked for after it; what was committed stays, and the next run of the job resumes it`,
      {
        details: { signal },
      },
    );
    this.exitCode = signal === 'SIGINT' ? 130 : 143;
  }
}

/** Bad usage or configuration: the command line, the environment or a job file. Exit code 2. */
export class ConfigError extends FatalError {
  override readonly exitCode = 2;
  constructor(
    /** What is wrong, before the list of problems. */
    readonly headline: string,
    readonly problems: readonly string[] = [],
    /** What to do about them, after the list. */
    readonly hint?: string,
  ) {
    super([problems.length ? `${headline}\n  ${problems.join('\n  ')}` : headline, hint].filter(Boolean).join('\n'));
  }
}
