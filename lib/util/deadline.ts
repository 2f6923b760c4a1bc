import { AsyncLocalStorage } from 'node:async_hooks';

const deadlines = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs `fn` under `signal`, the deadline of one invocation: the adapters (DynamoDB, SQS, Secrets Manager, WeCom
 * over fetch) give it to every call `fn` makes, so no call, with its retries, outlives it. An entry point sets it
 * a little before its Lambda timeout, so that an outage ends in the function's own answer (503 + Retry-After)
 * instead of Lambda's timeout (API Gateway's bare 500). AsyncLocalStorage keeps concurrent invocations apart (the
 * local stack runs many in one process).
 *
 * @example await runWithDeadline(AbortSignal.timeout(9_000), () => handler(event, context));
 */
export const runWithDeadline = <T>(signal: AbortSignal, fn: () => T): T => deadlines.run(signal, fn);

/** The deadline of the invocation this code runs in, if its entry point set one. */
export const deadlineSignal = (): AbortSignal | undefined => deadlines.getStore();
