/**
 * What an AWS SDK error means, in one place. Only the adapters that talk to AWS (lib/store, lib/queue; lib/config for
 * its secret) import this:
 * they turn SDK errors into their ports' own errors, so nothing above them sees an SDK error.
 */

/** AWS error names that mean "slow down" (DynamoDB, SQS, Secrets Manager). */
const AWS_THROTTLING = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
]);

/**
 * True for an AWS SDK error (it carries `$metadata`) that means the service could not be reached, failed on its
 * side or throttled — what is left after the SDK's own retries during an outage — or for a call the invocation's
 * deadline cut short. Not for errors the request
 * itself caused (validation, conditional checks, missing resources: `$fault: 'client'` with an HTTP answer).
 */
export function isAwsUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  // The invocation's deadline cut the call (lib/aws/client.ts sendOptions; nothing else aborts SDK calls): the
  // service did not answer in time. Cut before its first attempt, the error has no `$metadata`.
  if (err.name === 'AbortError') return true;
  if (!('$metadata' in err)) return false;
  const e = err as Error & { $fault?: string; $metadata: { httpStatusCode?: number } };
  if (e.$fault === 'server' || AWS_THROTTLING.has(e.name)) return true;
  // No HTTP answer at all: refused, reset or timed out on the way.
  return e.$metadata.httpStatusCode === undefined;
}

/** True for the SDK's ConditionalCheckFailedException, without importing the class into every adapter. */
export const isConditionFailed = (err: unknown): boolean =>
  err instanceof Error && err.name === 'ConditionalCheckFailedException';

/**
 * True for a request AWS refused as invalid (`ValidationException`), e.g. a DynamoDB item over 400 KB. Sent again
 * unchanged it fails again: never a reason to answer "unavailable, retry".
 */
export const isValidationError = (err: unknown): boolean =>
  err instanceof Error && '$metadata' in err && err.name === 'ValidationException';
