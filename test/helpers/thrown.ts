import { toErrorResponse } from '#lib/http/index.js';

/** The error of a given class that `fn` throws; fails the test if it throws nothing or something else. */
export function thrown<T extends Error>(fn: () => unknown, type: abstract new (...args: never[]) => T): T {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected ${type.name} to be thrown`);
}

/** What `promise` rejects with; fails the test if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** The HTTP status lib/http answers an error with (its one mapping table), e.g. 400 for a hook payload error. */
export const statusOf = (err: unknown): number => toErrorResponse(err).statusCode;
