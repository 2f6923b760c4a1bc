import { type ChannelConfig, DELIVERY_DEFAULTS } from '#lib/config/index.js';
import { LIMITS } from '#lib/messages/index.js';
import type { QueuedMessage } from '#lib/model/index.js';

/**
 * When a message stops being retried or waited for: its own `ttl_seconds` (then it becomes `expired`), or the app's (or robot's)
 * delivery budget, `delivery.budgetSeconds` (then `dead`), whichever comes first. Both count from acceptance
 * (`createdAt`, carried by every copy), or from its release when it was scheduled; so neither retries nor deferrals
 * can make a message live longer, and a deferral, which starts a fresh SQS copy, does not reset it.
 */
export interface Deadline {
  atMs: number;
  kind: 'ttl' | 'budget';
  seconds: number;
}

export function deadlineOf(msg: QueuedMessage, app: ChannelConfig | undefined): Deadline {
  // A scheduled message counts from its time, not from its acceptance: it could not have gone before.
  const createdMs = Date.parse(msg.createdAt);
  const startMs = msg.schedule ? Math.max(createdMs, Date.parse(msg.schedule.releaseAt)) : createdMs;
  const budget = app?.delivery?.budgetSeconds ?? DELIVERY_DEFAULTS.budgetSeconds;
  // An operator's redrive gives the message a fresh budget (never a shorter one); its ttl_seconds stays the client's.
  const budgetAtMs = Math.max(startMs, msg.redrivenAt ? Date.parse(msg.redrivenAt) : 0) + budget * 1000;
  const ttl = msg.request.ttlSeconds;
  const ttlAtMs = ttl !== undefined ? startMs + ttl * 1000 : Number.POSITIVE_INFINITY;
  return ttl !== undefined && ttlAtMs <= budgetAtMs
    ? { atMs: ttlAtMs, kind: 'ttl', seconds: ttl }
    : { atMs: budgetAtMs, kind: 'budget', seconds: budget };
}

/**
 * How much earlier than WeCom's own interval the gateway stops resending a message that may have reached WeCom:
 * the time a send takes to arrive, plus clock differences between us and WeCom.
 */
export const PROTECTION_GUARD_MS = 60_000;

/**
 * The `duplicate_check_interval` (seconds) that protects a resend of this message, or 0 when none does (the
 * client opted out). Bodies queued before the interval was fixed at acceptance were resent with the longest one.
 */
export function protectionSecondsOf(msg: QueuedMessage): number {
  // A robot's webhook takes no duplicate check: nothing protects a resend.
  if (msg.request.robot !== undefined) return 0;
  const { enable_duplicate_check, duplicate_check_interval } = msg.request.options;
  // WeCom's default interval when a client turned the check on without one.
  if (enable_duplicate_check === 1) return duplicate_check_interval ?? 1800;
  return msg.duplicateCheckSeconds ?? LIMITS.options.maxDuplicateCheckIntervalSeconds;
}

/**
 * True when a message that may have reached WeCom (an attempt whose answer was lost, from `since`) can no longer
 * be resent under the protection of WeCom's duplicate check: WeCom compares only within the interval after the
 * first delivery, so a resend now could arrive twice. Such a message is not resent (lib/sender marks it failed).
 * A robot's message is never protected (its webhook has no duplicate check); an app's whose client opted out of the
 * check accepted the risk.
 */
export function pastProtection(msg: QueuedMessage, since: string | undefined, now: number): boolean {
  if (since === undefined) return false;
  if (msg.request.robot !== undefined) return true;
  const seconds = protectionSecondsOf(msg);
  if (seconds === 0) return false;
  return now + PROTECTION_GUARD_MS >= Date.parse(since) + seconds * 1000;
}
