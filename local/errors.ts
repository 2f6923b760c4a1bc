/** Errors raised by the local stack itself (not by the handlers it runs). */
export class LocalStackError extends Error {
  readonly code: string;
  readonly context: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, context: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LocalStackError';
    this.code = code;
    this.context = context;
  }
}

/** The handler ran past its Lambda timeout; Lambda would have stopped it ("Task timed out"). */
export class FunctionTimeoutError extends LocalStackError {
  constructor(functionName: string, timeoutSeconds: number) {
    super('function_timeout', `${functionName}: Task timed out after ${timeoutSeconds} seconds`, {
      functionName,
      timeoutSeconds,
    });
    this.name = 'FunctionTimeoutError';
  }
}

/** The SQS handler's partial batch response is one Lambda treats as a failure of the whole batch. */
export class InvalidBatchResponseError extends LocalStackError {
  constructor(reason: string, context: Record<string, unknown> = {}) {
    super('invalid_batch_response', `batch treated as failed: ${reason}`, context);
    this.name = 'InvalidBatchResponseError';
  }
}

/** SQS refused to delete some processed messages; they will be delivered again. */
export class DeleteFailedError extends LocalStackError {
  constructor(queueUrl: string, failures: readonly { id: string; code?: string; message?: string }[]) {
    super('delete_failed', `DeleteMessageBatch failed for ${failures.length} message(s)`, {
      queueUrl,
      failures,
    });
    this.name = 'DeleteFailedError';
  }
}

/**
 * Races `promise` against the Lambda timeout. The handler keeps running after the timeout (a local
 * process cannot freeze it the way Lambda does); only its result is ignored.
 */
export function withFunctionTimeout<T>(
  promise: Promise<T>,
  functionName: string,
  timeoutSeconds: number,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new FunctionTimeoutError(functionName, timeoutSeconds)),
      timeoutSeconds * 1000,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
