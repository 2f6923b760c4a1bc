import type { AppConfig } from '#lib/config/index.js';
import type { AppMessageRequest, MessageRequest } from '#lib/messages/index.js';
import type { MessageRecord } from '#lib/model/index.js';
import { MAX_DELAY_SECONDS } from '#lib/queue/message-queue.js';
import { RELEASE_TIMERS } from '#lib/resources/index.js';
import {
  DEFAULT_SPREAD_SECONDS,
  MAX_SCHEDULE_AHEAD_MS,
  planSchedule,
  type QuietHoursRule,
  rulesFor,
  type Schedule,
} from '#lib/schedule/index.js';
import { AccessDeniedError, InvalidRequestError } from './errors.js';
import type { Principal } from './types.js';

/** The scope that lets a message send inside its app's quiet hours (`quiet_hours: false`). */
export const QUIET_HOURS_BYPASS = 'quiet-hours:bypass';

/**
 * Refuses a schedule the request may not have, before anything is stored: a `send_at` more than 30 days ahead
 * (400 naming it), or `quiet_hours: false` from a key without {@link QUIET_HOURS_BYPASS} (403).
 */
export function checkSchedule(principal: Principal, req: MessageRequest, nowMs: number): void {
  // A group robot's body takes neither send_at nor quiet_hours (its validator refuses them).
  if (req.robot !== undefined) return;
  if (req.sendAt !== undefined && Date.parse(req.sendAt) - nowMs > MAX_SCHEDULE_AHEAD_MS) {
    throw new InvalidRequestError('invalid_message', 'the message is invalid', [
      { field: 'send_at', message: `${req.sendAt} is more than 30 days ahead` },
    ]);
  }
  if (req.quietHours === false && !principal.scopes?.includes(QUIET_HOURS_BYPASS)) {
    throw new AccessDeniedError(
      `quiet_hours: false needs the ${QUIET_HOURS_BYPASS} scope, which API key ${principal.name} lacks`,
    );
  }
}

const asRules = (q: AppConfig['quietHours']): readonly QuietHoursRule[] =>
  q === undefined ? [] : Array.isArray(q) ? q : [q];

/** The schedule of an accepted message (undefined: it goes now), computed once, at acceptance. */
export function scheduleOf(app: AppConfig | undefined, req: AppMessageRequest, id: string, nowMs: number) {
  const quiet = req.quietHours === false ? [] : rulesFor(asRules(app?.quietHours), req);
  return planSchedule({
    id,
    nowMs,
    ...(req.sendAt !== undefined ? { sendAtMs: Date.parse(req.sendAt) } : {}),
    quiet,
    spreadMs: (app?.schedule?.spreadSeconds ?? DEFAULT_SPREAD_SECONDS) * 1000,
  });
}

/**
 * How a scheduled record reaches its lane: with an SQS delay when its release is within SQS's longest delay, else
 * through a release timer that fires {@link RELEASE_TIMERS} `leadSeconds` before it.
 */
export type ReleaseVia = { kind: 'delay'; seconds: number } | { kind: 'timer'; atMs: number };

export function releaseVia(schedule: Schedule, nowMs: number): ReleaseVia {
  const releaseMs = Date.parse(schedule.releaseAt);
  // Rounded up: an SQS delay never makes a copy visible early; the sender waits out what is left.
  const seconds = Math.max(0, Math.ceil((releaseMs - nowMs) / 1000));
  if (seconds <= MAX_DELAY_SECONDS) return { kind: 'delay', seconds };
  return { kind: 'timer', atMs: releaseMs - RELEASE_TIMERS.leadSeconds * 1000 };
}

/** The record's DynamoDB TTL: the retention counts from its release, so a message scheduled far ahead outlives it. */
export const expiresAtOf = (schedule: Schedule | undefined, nowMs: number, retentionDays: number): number =>
  Math.floor(Math.max(nowMs, schedule ? Date.parse(schedule.releaseAt) : 0) / 1000) + retentionDays * 86_400;

/** The answer's schedule fields (`send_at`, `release_at`) of a scheduled record. */
export const scheduleView = (r: Pick<MessageRecord, 'schedule'>) =>
  r.schedule ? { send_at: r.schedule.dueAt, release_at: r.schedule.releaseAt } : {};
