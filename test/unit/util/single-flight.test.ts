import { describe, expect, it } from 'vitest';
import { KeyedQueue, SingleFlight } from '#lib/util/index.js';

/** A promise the test settles by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('SingleFlight', () => {
  it('gives concurrent callers of one key one call, and other keys their own', async () => {
    const flights = new SingleFlight<string, number>();
    const calls: string[] = [];
    const a = deferred<number>();
    const call = (key: string, p: Promise<number>) => () => {
      calls.push(key);
      return p;
    };

    const first = flights.run('a', call('a', a.promise));
    const second = flights.run('a', call('a', Promise.resolve(99)));
    const other = flights.run('b', call('b', Promise.resolve(2)));
    a.resolve(1);

    expect(await Promise.all([first, second, other])).toEqual([1, 1, 2]);
    expect(calls).toEqual(['a', 'b']);
  });

  it('starts anew after a call settles, failed or not', async () => {
    const flights = new SingleFlight<string, number>();
    await expect(flights.run('a', () => Promise.reject(new Error('down')))).rejects.toThrow('down');

    expect(await flights.run('a', async () => 7)).toBe(7);
  });
});

describe('KeyedQueue', () => {
  it('runs the calls of one key one at a time in arrival order, even after a failure', async () => {
    const turns = new KeyedQueue<string>();
    const log: string[] = [];
    const gate = deferred<void>();

    const first = turns.run('k', async () => {
      log.push('first start');
      await gate.promise;
      log.push('first end');
      throw new Error('first failed');
    });
    const second = turns.run('k', async () => {
      log.push('second');
      return 2;
    });
    const other = turns.run('other', async () => {
      log.push('other');
      return 3;
    });
    await other;
    gate.resolve();

    await expect(first).rejects.toThrow('first failed');
    expect(await second).toBe(2);
    expect(log).toEqual(['first start', 'other', 'first end', 'second']);
  });
});
