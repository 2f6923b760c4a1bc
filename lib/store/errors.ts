export class StoreError extends Error {
  override readonly name: string = 'StoreError';
  readonly code: string = 'store_error';
}

/**
 * DynamoDB could not be reached, failed on its side or throttled, after the SDK's own retries. A write that fails
 * so may still have been applied (its answer lost); callers that must know read again.
 */
export class StoreUnavailableError extends StoreError {
  override readonly name = 'StoreUnavailableError';
  override readonly code = 'store_unavailable';
  constructor(options: { cause: unknown }) {
    super('DynamoDB is unavailable right now', options);
  }
}

/**
 * DynamoDB refused the request itself (ValidationException): sent again unchanged it fails again. `tooLarge`: the
 * item is over DynamoDB's 400 KB limit.
 */
export class StoreRejectedError extends StoreError {
  override readonly name = 'StoreRejectedError';
  override readonly code = 'store_rejected';
  readonly tooLarge: boolean;
  constructor(options: { cause: unknown }) {
    const detail = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(`DynamoDB refused the request: ${detail}`, options);
    this.tooLarge = /size/i.test(detail);
  }
}
