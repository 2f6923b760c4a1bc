import { fullJitterSeconds } from '#lib/util/index.js';
import type { DeliveryResult } from './types.js';

/**
 * When webhook deliveries are retried. Full jitter (delay uniform in [1 s, min(cap, base × 2^(n−1))]), so a
 * burst of failures to one receiver spreads out instead of returning in lockstep; the spec recommends backoff
 * with jitter over at least a day. Retries go on until `maxAgeSeconds` after the first attempt: the last one is
 * made at or after that age, so a receiver that is down for up to 24 h still gets the webhook. With the defaults
 * (30 s base, 2 h cap) that is a median of 32 attempts over 24–26 h (27–40 for 98 % of 10,000 simulated
 * schedules, 48 at most; see the unit test), and a receiver that comes back waits at most 2 h for the next one.
 * `maxAttempts` (100) is a safety stop the defaults do not reach.
 */
export interface WebhookRetryPolicy {
  baseSeconds: number;
  capSeconds: number;
  maxAgeSeconds: number;
  maxAttempts: number;
}

export const DEFAULT_WEBHOOK_RETRY: WebhookRetryPolicy = {
  baseSeconds: 30,
  capSeconds: 2 * 3600,
  maxAgeSeconds: 24 * 3600,
  maxAttempts: 100,
};

/**
 * Seconds to wait before the next attempt, or undefined when the webhook is dead (retries exhausted). A
 * receiver's `Retry-After` is honoured as a lower bound, up to the cap.
 *
 * @param attempts attempts made so far (≥ 1)
 * @param ageSeconds time since the first attempt
 * @example nextRetryDelaySeconds(3, 400) // somewhere in 1..120
 */
export function nextRetryDelaySeconds(
  attempts: number,
  ageSeconds: number,
  opts: { retryAfterSeconds?: number; policy?: WebhookRetryPolicy; random?: () => number } = {},
): number | undefined {
  const policy = opts.policy ?? DEFAULT_WEBHOOK_RETRY;
  if (attempts >= policy.maxAttempts || ageSeconds >= policy.maxAgeSeconds) return undefined;
  const jittered = fullJitterSeconds(attempts, policy, opts.random);
  return Math.max(jittered, Math.min(opts.retryAfterSeconds ?? 0, policy.capSeconds));
}

export type DeliveryVerdict =
  | { outcome: 'delivered' }
  | { outcome: 'retry'; reason: string; retryAfterSeconds?: number }
  | { outcome: 'stop'; reason: string };

/**
 * What an attempt means for the webhook (Standard Webhooks, "Delivery success and failure"):
 * - 2xx: delivered.
 * - 410 Gone: stop — the receiver said it wants no more webhooks from us.
 * - 429, 5xx, 408, timeouts, refused connections, DNS that cannot answer now: retry (with Retry-After).
 * - 3xx: retry. Redirects are never followed (each hop would need its own SSRF check, and the spec advises
 *   against it); the business can fix the URL while retries last.
 * - Any other 4xx: retry too. A receiver mid-deploy or with a half-rotated secret answers 401/403/404 for a
 *   while; 24 h of retries give its owner time, and only 410 is an explicit "stop".
 * - Refused by the SSRF guard (private address, bad scheme, port or userinfo): stop — it is recorded as refused
 *   and retrying cannot make the target acceptable.
 */
export function classifyDelivery(result: DeliveryResult): DeliveryVerdict {
  if (result.kind === 'refused') return { outcome: 'stop', reason: `refused: ${result.reason}` };
  if (result.kind === 'failed') return { outcome: 'retry', reason: result.code };
  const { status } = result;
  if (status >= 200 && status < 300) return { outcome: 'delivered' };
  if (status === 410) return { outcome: 'stop', reason: 'HTTP 410 Gone: the receiver asked to stop' };
  const retryAfter =
    result.retryAfterSeconds !== undefined ? { retryAfterSeconds: result.retryAfterSeconds } : {};
  if (status >= 300 && status < 400)
    return { outcome: 'retry', reason: `HTTP ${status}: redirects are not followed` };
  return { outcome: 'retry', reason: `HTTP ${status}`, ...retryAfter };
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or bad. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text);
  // IMF-fixdate only (the form senders must generate): Date.parse alone would read "-5" as a year.
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}
