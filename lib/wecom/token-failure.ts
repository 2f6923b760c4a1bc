import { createHash } from 'node:crypto';
import { TokenUnavailableError, WecomApiError, WecomTransportError } from './errors.js';

/**
 * A failed `gettoken`, remembered in the shared token item so that no container calls `gettoken` again before
 * `retryAtMs`, however many messages are waiting (SPEC §7: ≤ 2 calls per minute per app with a wrong secret).
 * WeCom bans the calling IP for an hour after repeated wrong-secret calls ("调用gettoken接口时,使用错误的secret
 * 多次调用,会导致同一个IP被禁用一小时", https://developer.work.weixin.qq.com/document/path/90313), and with the fixed
 * egress option every app of the deployment shares that IP.
 */
export interface TokenFailure {
  /** `config`: an errcode the operator must fix (40001 wrong secret…); `rateLimited`: 45009 (also an IP ban). */
  errclass: 'config' | 'rateLimited' | 'transient';
  /** WeCom's errcode; absent when WeCom did not answer (timeout, HTTP 5xx). */
  errcode?: number;
  errmsg?: string;
  /** Epoch ms: no `gettoken` call before this. */
  retryAtMs: number;
  /** Consecutive failures; the wait grows with it. */
  count: number;
  /** A short fingerprint of the secret that failed: a changed secret (the operator fixed the config) may try at once. */
  secretHash: string;
  atMs: number;
}

/**
 * How long to wait after the n-th consecutive failure (n ≥ 1). Transient failures back off from 2 s doubling to a
 * minute; configuration errors and rate limits wait a minute, then 5 and 15 minutes: at most 7 calls in the first
 * hour and 4 an hour after, fewer than the wrong-secret calls that get an IP banned in the strict simulator (10).
 */
export interface TokenBackoff {
  transientMs: readonly number[];
  configMs: readonly number[];
}

export const DEFAULT_TOKEN_BACKOFF: TokenBackoff = {
  transientMs: [2_000, 4_000, 8_000, 16_000, 32_000, 60_000],
  configMs: [60_000, 300_000, 900_000],
};

/** The n-th entry (1-based) of a schedule whose last entry repeats. */
export const nthStep = (steps: readonly number[], n: number): number =>
  steps[Math.min(Math.max(n, 1), steps.length) - 1] ?? 0;

export const secretFingerprint = (secret: string): string =>
  createHash('sha256').update(secret).digest('hex').slice(0, 16);

/** What a failed `gettoken` call leaves behind, given the failure remembered before it (if the same secret). */
export function nextFailure(
  previous: TokenFailure | undefined,
  err: unknown,
  secretHash: string,
  now: number,
  backoff: TokenBackoff,
): TokenFailure {
  const errclass =
    err instanceof WecomApiError
      ? err.errclass === 'rateLimited'
        ? 'rateLimited'
        : err.errclass === 'retryable' || err.errclass === 'token'
          ? 'transient'
          : 'config'
      : 'transient';
  const count =
    previous && previous.secretHash === secretHash && previous.errclass === errclass ? previous.count + 1 : 1;
  const steps = errclass === 'transient' ? backoff.transientMs : backoff.configMs;
  return {
    errclass,
    ...(err instanceof WecomApiError ? { errcode: err.errcode, errmsg: err.errmsg } : {}),
    retryAtMs: now + nthStep(steps, count),
    count,
    secretHash,
    atMs: now,
  };
}

/** True while the failure forbids a `gettoken` call with this secret. */
export const blocks = (f: TokenFailure | undefined, secretHash: string, now: number): f is TokenFailure =>
  f !== undefined && f.secretHash === secretHash && f.retryAtMs > now;

/**
 * The error a caller gets while a remembered failure forbids calling `gettoken`: WeCom's own errcode again (so the
 * sender classifies it exactly as the original answer), or TokenUnavailableError for a failure without one.
 */
export function rememberedError(f: TokenFailure, corpId: string, agentId: number): Error {
  if (f.errcode !== undefined) {
    return new WecomApiError(f.errcode, f.errmsg ?? '', 'gettoken', {
      remembered: true,
      retryAtMs: f.retryAtMs,
    });
  }
  return new TokenUnavailableError(corpId, agentId, 0, f.retryAtMs);
}

/** Whether a `gettoken` failure is worth remembering (a failure of WeCom or the way to it, not of our store). */
export const isGettokenFailure = (err: unknown): boolean =>
  err instanceof WecomApiError || err instanceof WecomTransportError;
