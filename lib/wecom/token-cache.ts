import { randomUUID } from 'node:crypto';
import { SingleFlight } from '#lib/util/index.js';
import type { WecomApi } from './client.js';
import { TokenUnavailableError, WecomApiError } from './errors.js';
import {
  blocks,
  DEFAULT_TOKEN_BACKOFF,
  isGettokenFailure,
  nextFailure,
  rememberedError,
  secretFingerprint,
  type TokenBackoff,
  type TokenFailure,
} from './token-failure.js';

export interface StoredToken {
  token: string;
  /** Epoch ms when WeCom stops accepting it. */
  expiresAtMs: number;
  /** Epoch ms from which one caller should fetch a new one (refresh ahead of expiry). */
  refreshAtMs?: number;
  /** Epoch ms when it was fetched (its age is shown by `GET /v1/apps/{app}`). */
  fetchedAtMs?: number;
}

/** The shared token item: the current token (if one is still valid) and the last `gettoken` failure (if any). */
export interface TokenItem {
  token?: StoredToken;
  failure?: TokenFailure;
}

/** Port (DynamoDB adapter: lib/store/token-store.ts): shared access-token cache and its refresh lock, per (corpId, agentId). */
export interface TokenStore {
  get(corpId: string, agentId: number): Promise<TokenItem>;
  /** Stores a fresh token; a remembered failure goes with the old item. */
  put(corpId: string, agentId: number, token: StoredToken): Promise<void>;
  /** Remembers a failed `gettoken` next to the token (a still-valid token stays usable). */
  recordFailure(corpId: string, agentId: number, failure: TokenFailure): Promise<void>;
  /** Deletes the stored token only if it is still `token` (a newer one written meanwhile is kept). */
  invalidate(corpId: string, agentId: number, token: string): Promise<void>;
  /** Conditional put of the lock item: succeeds when no lock exists or the holder's lease has run out. */
  acquireLock(corpId: string, agentId: number, owner: string, leaseMs: number): Promise<boolean>;
  releaseLock(corpId: string, agentId: number, owner: string): Promise<void>;
}

/** What `describe` tells about an app's token (never the token itself). */
export interface TokenDescription {
  fetchedAtMs?: number;
  expiresAtMs?: number;
  failure?: TokenFailure;
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
  /**
   * How long a caller waits for another holder's refresh before giving up (default 15 s). Ingest passes less than
   * its 10 s function timeout, so a recall answers the gateway's own 503 instead of timing out.
   */
  maxWaitMs?: number;
  /** Waits after failed `gettoken` calls (token-failure.ts). */
  backoff?: TokenBackoff;
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
  /** Failures this container saw, in case the shared item could not record them (DynamoDB down too). */
  private readonly failures = new Map<string, TokenFailure>();
  private readonly loads = new SingleFlight<string, string>();
  private readonly owner = randomUUID();
  private readonly refreshAheadMs: number;
  private readonly leaseMs: number;
  private readonly maxWaitMs: number;
  private readonly backoff: TokenBackoff;
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
    this.backoff = opts.backoff ?? DEFAULT_TOKEN_BACKOFF;
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

  /**
   * What the app's token looks like right now, without calling WeCom: its age and life left, and the last failed
   * `gettoken` while it still holds calls back. Never the token itself.
   */
  async describe(app: TokenApp): Promise<TokenDescription> {
    const item = await this.store.get(app.corpId, app.agentId);
    const now = this.now();
    const failure = blocks(item.failure, secretFingerprint(app.secret), now) ? item.failure : undefined;
    return {
      ...(item.token
        ? {
            expiresAtMs: item.token.expiresAtMs,
            ...(item.token.fetchedAtMs !== undefined ? { fetchedAtMs: item.token.fetchedAtMs } : {}),
          }
        : {}),
      ...(failure ? { failure } : {}),
    };
  }

  private async load(app: TokenApp, key: string): Promise<string> {
    const started = this.now();
    const secretHash = secretFingerprint(app.secret);
    let delay = 25;
    for (;;) {
      const local = this.failures.get(key);
      if (blocks(local, secretHash, this.now())) return this.useUntilRetry(key, undefined, local, app);
      const { token: stored, failure } = await this.store.get(app.corpId, app.agentId);
      if (stored && this.isFresh(stored)) return this.remember(key, stored);
      // A recent failure holds every container back until its retry time (no gettoken storm).
      if (blocks(failure, secretHash, this.now())) return this.useUntilRetry(key, stored, failure, app);
      if (await this.store.acquireLock(app.corpId, app.agentId, this.owner, this.leaseMs)) {
        try {
          return await this.fetchHoldingLock(app, key, secretHash);
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

  /** Holding the lock: read again, then call `gettoken` unless a token or a failure appeared meanwhile. */
  private async fetchHoldingLock(app: TokenApp, key: string, secretHash: string): Promise<string> {
    // Another holder may have written a token (or a failure) between our read and our lock.
    const again = await this.store.get(app.corpId, app.agentId);
    if (again.token && this.isFresh(again.token)) return this.remember(key, again.token);
    if (blocks(again.failure, secretHash, this.now()))
      return this.useUntilRetry(key, again.token, again.failure, app);
    let res: Awaited<ReturnType<Pick<WecomApi, 'getToken'>['getToken']>>;
    try {
      res = await this.wecom.getToken(app.corpId, app.secret);
    } catch (err) {
      this.opts.onFetch?.(app);
      if (!isGettokenFailure(err)) throw err;
      const failure = nextFailure(again.failure, err, secretHash, this.now(), this.backoff);
      // Remembered before the lock is released, so the next holder reads it and does not call WeCom.
      this.failures.set(key, failure);
      await this.store.recordFailure(app.corpId, app.agentId, failure).catch(() => undefined);
      // A failed early refresh keeps using the token that is still valid (review H2).
      if (again.token && again.token.expiresAtMs > this.now() + 1_000)
        return this.useUntilRetry(key, again.token, failure, app);
      throw err;
    }
    this.opts.onFetch?.(app);
    const now = this.now();
    const lifeMs = res.expires_in * 1000;
    const token: StoredToken = {
      token: res.access_token,
      expiresAtMs: now + lifeMs,
      // WeCom answers a gettoken within a token's lifetime with that same token and its remaining life. A
      // token that is already inside the refresh-ahead window is used to its end instead of being fetched
      // again on every send.
      refreshAtMs: now + (lifeMs > 2 * this.refreshAheadMs ? lifeMs - this.refreshAheadMs : lifeMs),
      fetchedAtMs: now,
    };
    await this.store.put(app.corpId, app.agentId, token);
    this.failures.delete(key);
    return this.remember(key, token);
  }

  /**
   * While a failure holds `gettoken` back: a token that is still valid is used (and kept in memory until the retry
   * time, so this container does not read the item on every send); without one the remembered error is thrown.
   */
  private useUntilRetry(
    key: string,
    token: StoredToken | undefined,
    failure: TokenFailure,
    app: TokenApp,
  ): string {
    const now = this.now();
    if (token && token.expiresAtMs > now + 1_000) {
      return this.remember(key, {
        ...token,
        refreshAtMs: Math.min(failure.retryAtMs, token.expiresAtMs - 1_000),
      });
    }
    throw rememberedError(failure, app.corpId, app.agentId);
  }

  private isFresh(t: StoredToken): boolean {
    return (t.refreshAtMs ?? t.expiresAtMs - this.refreshAheadMs) > this.now();
  }

  private remember(key: string, t: StoredToken, cache = true): string {
    if (cache) this.memory.set(key, t);
    return t.token;
  }
}
