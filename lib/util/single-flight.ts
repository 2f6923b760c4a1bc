/**
 * Single flight per key: callers that ask while a call for the same key is in flight share its promise instead of
 * starting their own (the records of one batch ask at once, and one lookup answers them all). The next call after
 * it settles starts anew.
 *
 * @example const token = await flights.run(app, () => fetchToken(app));
 */
export class SingleFlight<K, V> {
  private readonly inflight = new Map<K, Promise<V>>();

  run(key: K, call: () => Promise<V>): Promise<V> {
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = call().finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }
}

/**
 * One call at a time per key, in arrival order: a call starts when the one before it for the same key has settled
 * (whether it succeeded or not). Calls for other keys run concurrently.
 *
 * @example const ok = await turns.run(key, () => reserve(key));
 */
export class KeyedQueue<K> {
  private readonly tails = new Map<K, Promise<unknown>>();

  run<V>(key: K, call: () => Promise<V>): Promise<V> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const turn = previous.then(call);
    const settled = turn.catch(() => undefined);
    this.tails.set(key, settled);
    void settled.then(() => {
      if (this.tails.get(key) === settled) this.tails.delete(key);
    });
    return turn;
  }
}
