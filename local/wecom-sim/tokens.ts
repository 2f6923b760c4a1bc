import { randomBytes } from 'node:crypto';

interface TokenRecord<A> {
  app: A;
  expiresAt: number;
  revoked: boolean;
}

/** The access tokens WeCom has handed out, per app. */
export class Tokens<A> {
  readonly #ttlSeconds: number;
  readonly #ttlMs: number;
  #tokens = new Map<string, TokenRecord<A>>();
  /** The token each app was last given (WeCom hands it out again while it is valid). */
  #current = new Map<A, string>();
  #sweepAt = 1024;

  constructor(ttlSeconds: number) {
    this.#ttlSeconds = ttlSeconds;
    this.#ttlMs = ttlSeconds * 1000;
  }

  issue(app: A, now: number): { access_token: string; expires_in: number } {
    this.#sweep(now);
    // WeCom: "有效期内重复获取返回相同结果" — within its lifetime a token is handed out again, with the time it has
    // left; a client that refreshes ahead of expiry must cope with getting the same token back.
    const current = this.#current.get(app);
    const rec = current === undefined ? undefined : this.#tokens.get(current);
    if (current !== undefined && rec !== undefined && !rec.revoked && rec.expiresAt > now) {
      return { access_token: current, expires_in: Math.ceil((rec.expiresAt - now) / 1000) };
    }
    // Opaque and well under WeCom's 512-byte maximum. A new token does not revoke the previous one:
    // WeCom keeps older tokens valid until they expire.
    const token = randomBytes(48).toString('base64url');
    this.#tokens.set(token, { app, expiresAt: now + this.#ttlMs, revoked: false });
    this.#current.set(app, token);
    return { access_token: token, expires_in: this.#ttlSeconds };
  }

  /** The token's app, or why it cannot be used. */
  find(token: string, now: number): A | 'unknown' | 'expired' {
    const rec = this.#tokens.get(token);
    if (rec === undefined) return 'unknown';
    if (rec.revoked || rec.expiresAt <= now) return 'expired';
    return rec.app;
  }

  revokeAll(): void {
    for (const rec of this.#tokens.values()) rec.revoked = true;
  }

  revoke(token: string | null): void {
    const rec = token === null ? undefined : this.#tokens.get(token);
    if (rec !== undefined) rec.revoked = true;
  }

  clear(): void {
    this.#tokens = new Map();
    this.#current = new Map();
  }

  #sweep(now: number): void {
    if (this.#tokens.size < this.#sweepAt) return;
    for (const [token, rec] of this.#tokens) if (rec.expiresAt <= now) this.#tokens.delete(token);
    this.#sweepAt = Math.max(1024, this.#tokens.size * 2);
  }
}
