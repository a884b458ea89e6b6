/**
 * Every error the tool raises says what went wrong and what to do next, and whether trying again can
 * help. The retry helper decides from the class alone.
 */
export class EtlError extends Error {
  /** Process exit code when this error ends a command. */
  readonly exitCode: number = 1;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A failure that may pass: a timeout, a reset, a 429 or 5xx, a lagging node. */
export class RetryableError extends EtlError {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A failure that repeats however often it is tried: bad input, bad credentials, bad data. */
export class FatalError extends EtlError {}

/** Bad usage or configuration: the command line, the environment or a job file. Exit code 2. */
export class ConfigError extends FatalError {
  override readonly exitCode = 2;
  constructor(
    message: string,
    readonly problems: readonly string[] = [],
    hint?: string,
  ) {
    super([problems.length ? `${message}\n  ${problems.join('\n  ')}` : message, hint].filter(Boolean).join('\n'));
  }
}
