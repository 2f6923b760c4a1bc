import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Keys every log line of one invocation carries (Lambda request id, cold start, API Gateway request id, message
 * id…). They live in an AsyncLocalStorage rather than on the logger: the loggers are built once per container and
 * shared by lib/ code, and the local API server runs concurrent requests through one ingest "container", so a
 * mutable logger would stamp one request's ids on another's lines.
 */
const storage = new AsyncLocalStorage<Record<string, unknown>>();

/** Runs `fn` with `keys` on every log line written inside it, including after awaits. */
export function runWithLogContext<T>(keys: Record<string, unknown>, fn: () => T): T {
  return storage.run({ ...keys }, fn);
}

/** Adds keys to the current invocation's log context, once they become known (e.g. a new message id). */
export function appendLogContext(keys: Record<string, unknown>): void {
  const store = storage.getStore();
  if (store) Object.assign(store, keys);
}

export const currentLogContext = (): Record<string, unknown> | undefined => storage.getStore();
