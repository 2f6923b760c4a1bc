export class QueueError extends Error {
  override readonly name: string = 'QueueError';
  readonly code: string = 'queue_error';
}

/** SQS could not be reached, failed on its side or throttled, after the SDK's own retries. */
export class QueueUnavailableError extends QueueError {
  override readonly name = 'QueueUnavailableError';
  override readonly code = 'queue_unavailable';
  constructor(options: { cause: unknown }) {
    super('SQS is unavailable right now', options);
  }
}
