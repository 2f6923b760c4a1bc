import { randomUUID } from 'node:crypto';
import { SingleFlight } from '#lib/util/index.js';
import type { WecomApi } from './client.js';
import { TokenUnavailableError, WecomApiError } from './errors.js';

export interface StoredToken {
  token: string;
  /** Epoch ms when WeCom stops accepting it. */
  expiresAtMs: number;
  /** Epoch ms from which one caller should fetch a new one (refresh ahead of expiry). */
  refreshAtMs?: number;
}

/** Port (DynamoDB adapter: lib/store/token-store.ts): shared access-token cache and its refresh lock, per (corpId, agentId). */
export interface TokenStore {
  get(corpId: string, agentId: number): Promise<StoredToken | undefined>;
  put(corpId: string, agentId: number, token: StoredToken): Promise<void>;
  /** Deletes the stored token only if it is still `token` (a newer one written meanwhile is kept). */
  invalidate(corpId: string, agentId: number, token: string): Promise<void>;
  /** Conditional put of the lock item: succeeds when no lock exists or the holder's lease has run out. */
  acquireLock(corpId: string, agentId: number, owner: string, leaseMs: number): Promise<boolean>;
  releaseLock(corpId: string, agentId: number, owner: string): Promise<void>;
}

export interface TokenApp {
  corpId: string;
  agentId: number;
  secret: string;
}

export interface TokenCacheOptions {
  /** Refresh this long before expiry so no send ever uses a token in its last seconds (default 5 min). */
  refreshAheadMs?: number;
  /**
   * Lock lease: a holder that crashes blocks others for at most this long (default 20 s, longer than the WeCom
   * client's worst-case gettoken: 3 s connect + 5 s headers + 5 s body, so a slow holder is never overtaken).
   */
  leaseMs?: number;
  /** How long a caller waits for another holder's refresh before giving up (default 15 s). */
  maxWaitMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Called after each gettoken call (metrics). */
  onFetch?: (app: TokenApp) => void;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Access tokens per (corpId, agentId): memory → DynamoDB item → lock item → `gettoken`. Exactly one caller
 * across all containers holds the lock and calls WeCom; the others poll the item with backoff. WeCom's
 * 2,000 gettoken calls/day/app and its early invalidations make a "token storm" the classic outage.
 *
 * @example const res = await tokens.withToken(app, (token) => wecom.send(token, body));
 */
export class TokenCache {
  private readonly memory = new Map<string, StoredToken>();
  private readonly loads = new SingleFlight<string, string>();
  private readonly owner = randomUUID();
  private readonly refreshAheadMs: number;
  private readonly leaseMs: number;
  private readonly maxWaitMs: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly store: TokenStore,
    private readonly wecom: Pick<WecomApi, 'getToken'>,
    private readonly opts: TokenCacheOptions = {},
  ) {
    this.refreshAheadMs = opts.refreshAheadMs ?? 5 * 60_000;
    this.leaseMs = opts.leaseMs ?? 20_000;
    this.maxWaitMs = opts.maxWaitMs ?? 15_000;
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? defaultSleep;
  }

  async get(app: TokenApp): Promise<string> {
    const key = `${app.corpId}#${app.agentId}`;
    const cached = this.memory.get(key);
    if (cached && this.isFresh(cached)) return cached.token;
    // Inside the container, concurrent records of one batch share one lookup.
    return this.loads.run(key, () => this.load(app, key));
  }

  /**
   * Calls WeCom with the app's token. WeCom may invalidate a token before its expiry (40014/42001/41001): then the
   * token is dropped, a fresh one fetched (under the shared lock) and the call made once more with it — once, so a
   * token error that persists reaches the caller. `call` runs again in full on that retry (the sender reserves its
   * quota inside it, charging the window the resend lands in).
   *
   * @example await tokens.withToken(app, (token) => wecom.recall(token, msgid));
   */
  async withToken<T>(app: TokenApp, call: (token: string) => Promise<T>): Promise<T> {
    const token = await this.get(app);
    try {
      return await call(token);
    } catch (err) {
      if (!(err instanceof WecomApiError) || err.errclass !== 'token') throw err;
      await this.invalidate(app, token);
      return call(await this.get(app));
    }
  }

  /** After 40014/42001/41001: drop the failing token here and in DynamoDB (only if it is still that token). */
  async invalidate(app: TokenApp, token: string): Promise<void> {
    const key = `${app.corpId}#${app.agentId}`;
    if (this.memory.get(key)?.token === token) this.memory.delete(key);
    await this.store.invalidate(app.corpId, app.agentId, token);
  }

  private async load(app: TokenApp, key: string): Promise<string> {
    const started = this.now();
    let delay = 25;
    for (;;) {
      const stored = await this.store.get(app.corpId, app.agentId);
      if (stored && this.isFresh(stored)) return this.remember(key, stored);
      if (await this.store.acquireLock(app.corpId, app.agentId, this.owner, this.leaseMs)) {
        try {
          // Another holder may have written a token between our read and our lock.
          const again = await this.store.get(app.corpId, app.agentId);
          if (again && this.isFresh(again)) return this.remember(key, again);
          const res = await this.wecom.getToken(app.corpId, app.secret);
          this.opts.onFetch?.(app);
          const lifeMs = res.expires_in * 1000;
          const token = {
            token: res.access_token,
            expiresAtMs: this.now() + lifeMs,
            // WeCom answers a gettoken within a token's lifetime with that same token and its remaining life. A
            // token that is already inside the refresh-ahead window is used to its end instead of being fetched
            // again on every send.
            refreshAtMs:
              this.now() + (lifeMs > 2 * this.refreshAheadMs ? lifeMs - this.refreshAheadMs : lifeMs),
          };
          await this.store.put(app.corpId, app.agentId, token);
          return this.remember(key, token);
        } finally {
          await this.store.releaseLock(app.corpId, app.agentId, this.owner);
        }
      }
      // Someone else is refreshing. A still-valid token (inside the refresh-ahead window) is good to use now.
      if (stored && stored.expiresAtMs > this.now() + 1_000) return this.remember(key, stored, false);
      const waited = this.now() - started;
      if (waited >= this.maxWaitMs) throw new TokenUnavailableError(app.corpId, app.agentId, waited);
      await this.sleep(delay + Math.random() * delay);
      delay = Math.min(delay * 2, 500);
    }
  }

  private isFresh(t: StoredToken): boolean {
    return (t.refreshAtMs ?? t.expiresAtMs - this.refreshAheadMs) > this.now();
  }

  private remember(key: string, t: StoredToken, cache = true): string {
    if (cache) this.memory.set(key, t);
    return t.token;
  }
}
