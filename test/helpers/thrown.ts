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

/** The HTTP status lib/http answers an error with (its one mapping table), e.g. 400 for a hook payload error. */
export const statusOf = (err: unknown): number => toErrorResponse(err).statusCode;
