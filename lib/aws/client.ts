import { deadlineSignal } from '#lib/util/index.js';

/**
 * How every AWS SDK client of the functions talks to its service: a connection that does not open within 3 s fails
 * and is retried (up to `maxAttempts`). A request that opened but gets no answer within 5 s is only logged by the
 * SDK (it keeps waiting): `throwOnRequestTimeout` stays off because retrying a request that was merely slow can
 * apply it twice (a second SQS copy of one message, a conditional write that fails against its own first attempt).
 * What ends a call that hangs is the invocation's deadline ({@link sendOptions}), or the Lambda timeout.
 */
export const AWS_REQUEST_HANDLER = { connectionTimeout: 3_000, requestTimeout: 5_000 } as const;

/** Attempts per call, the first included; the invocation's deadline bounds them all (see {@link sendOptions}). */
export const AWS_MAX_ATTEMPTS = 4;

/**
 * The options for one SDK `send`: the invocation's deadline (lib/util/deadline.ts) as its abort signal, which the
 * SDK applies to the request in flight and to the waits between retries. Undefined outside a deadline.
 *
 * @example await client.send(new GetItemCommand(input), sendOptions());
 */
export const sendOptions = (): { abortSignal: AbortSignal } | undefined => {
  const abortSignal = deadlineSignal();
  return abortSignal && { abortSignal };
};
