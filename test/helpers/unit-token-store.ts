import type { StoredToken, TokenFailure, TokenItem, TokenStore } from '#lib/wecom/index.js';

/** Yields to the event loop, so concurrent callers interleave as they would around a DynamoDB round trip. */
const roundTrip = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * In-memory TokenStore with DynamoDB's conditional semantics: each operation checks and writes in one step
 * after a simulated round trip. `calls` counts operations by name.
 */
export class InMemoryTokenStore implements TokenStore {
  readonly tokens = new Map<string, StoredToken>();
  readonly failures = new Map<string, TokenFailure>();
  readonly locks = new Map<string, { owner: string; leaseUntil: number }>();
  readonly calls = { get: 0, put: 0, recordFailure: 0, invalidate: 0, acquireLock: 0, releaseLock: 0 };

  constructor(private readonly now: () => number) {}

  total(): number {
    return Object.values(this.calls).reduce((a, b) => a + b, 0);
  }

  async get(corpId: string, agentId: number): Promise<TokenItem> {
    this.calls.get++;
    await roundTrip();
    const t = this.tokens.get(`${corpId}#${agentId}`);
    const f = this.failures.get(`${corpId}#${agentId}`);
    return {
      ...(t && t.expiresAtMs > this.now() ? { token: { ...t } } : {}),
      ...(f ? { failure: { ...f } } : {}),
    };
  }

  async put(corpId: string, agentId: number, token: StoredToken): Promise<void> {
    this.calls.put++;
    await roundTrip();
    this.tokens.set(`${corpId}#${agentId}`, { ...token });
    this.failures.delete(`${corpId}#${agentId}`);
  }

  async recordFailure(corpId: string, agentId: number, failure: TokenFailure): Promise<void> {
    this.calls.recordFailure++;
    await roundTrip();
    this.failures.set(`${corpId}#${agentId}`, { ...failure });
  }

  async invalidate(corpId: string, agentId: number, token: string): Promise<void> {
    this.calls.invalidate++;
    await roundTrip();
    const key = `${corpId}#${agentId}`;
    if (this.tokens.get(key)?.token === token) this.tokens.delete(key);
  }

  async acquireLock(corpId: string, agentId: number, owner: string, leaseMs: number): Promise<boolean> {
    this.calls.acquireLock++;
    await roundTrip();
    const key = `${corpId}#${agentId}`;
    const now = this.now();
    const lock = this.locks.get(key);
    // Same condition as DynamoTokenStore: attribute_not_exists(pk) OR leaseUntil < :now
    if (lock && !(lock.leaseUntil < now)) return false;
    this.locks.set(key, { owner, leaseUntil: now + leaseMs });
    return true;
  }

  async releaseLock(corpId: string, agentId: number, owner: string): Promise<void> {
    this.calls.releaseLock++;
    await roundTrip();
    const key = `${corpId}#${agentId}`;
    if (this.locks.get(key)?.owner === owner) this.locks.delete(key);
  }
}
