/**
 * Errors of the operator CLI. Each carries a stable `code` and the process exit code it maps to: 2 for a
 * mistake in how the command was called (the user fixes the command line), 1 for everything else.
 */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  readonly exitCode: 1 | 2 = 1;
  constructor(
    readonly code: string,
    message: string,
    readonly details: readonly unknown[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The command line is wrong: exit 2 with a pointer to `--help`. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  override readonly exitCode = 2;
  constructor(message: string, options?: { cause?: unknown }) {
    super('usage', message, [], options);
  }
}

/** The gateway answered with its error body (`{"error":{"code","message","details"}}`). */
export class ApiError extends CliError {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    code: string,
    message: string,
    details: readonly unknown[] = [],
  ) {
    super(code, message, details);
  }
}

/** The gateway could not be reached at all (refused, DNS, timeout). */
export class UnreachableError extends CliError {
  override readonly name = 'UnreachableError';
  constructor(
    readonly url: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super('unreachable', `cannot reach ${url}: ${reason}`, [], options);
  }
}

/** Something on AWS (credentials, a missing stack or secret) stopped the command. */
export class AwsError extends CliError {
  override readonly name = 'AwsError';
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, [], options);
  }
}
