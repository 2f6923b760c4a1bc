import { changes, type FailedAttempt, type QueuedMessage } from '#lib/model/index.js';
import type { Logger } from '#lib/observability/index.js';
import { MAX_DELAY_SECONDS } from '#lib/queue/index.js';
import { errcodeHint, WecomApiError, WecomError, WecomTransportError } from '#lib/wecom/index.js';
import { DEFAULT_RETRY, fullJitterSeconds } from './backoff.js';
import type { QuotaDecision } from './quota.js';
import type { IncomingRecord, Outcome, SenderDeps } from './types.js';

/** Over quota: wait for the window, or fail a message no window could ever hold. */
export async function refused(
  deps: SenderDeps,
  r: IncomingRecord,
  msg: QueuedMessage,
  decision: Extract<QuotaDecision, { ok: false }>,
): Promise<Outcome> {
  if (Number.isFinite(decision.retryAtMs))
    return defer(deps, r, msg, decision.retryAtMs, `quota ${decision.scope}`);
  await fail(deps, msg, {
    code: 'exceeds_quota',
    message: `the message needs more ${decision.scope} quota than the app's configured limit allows in one window`,
  });
  return 'ack';
}

/** A failed send (or token): pause and defer on 45009, fail on a permanent or config errcode, retry otherwise. */
export async function handleSendError(
  deps: SenderDeps,
  r: IncomingRecord,
  msg: QueuedMessage,
  err: unknown,
  log: Logger,
): Promise<Outcome> {
  if (err instanceof WecomApiError) {
    switch (err.errclass) {
      case 'rateLimited': {
        deps.metrics.count('RateLimited');
        const until = nowOf(deps) + (deps.rateLimitPauseMs ?? 60_000);
        log.warn('WeCom rate limit (45009): pausing app', { untilMs: until });
        await deps.pauses.pause(msg.app, until, `errcode ${err.errcode}`);
        return defer(deps, r, msg, until, `WeCom 45009`);
      }
      case 'config':
      case 'permanent': {
        // The app's setup is wrong (secret, trusted IP, agentid): every message of the app fails until fixed.
        if (err.errclass === 'config') deps.metrics.count('ConfigError', 1, { app: msg.app });
        const hint = errcodeHint(err.errcode, err.errmsg);
        await fail(deps, msg, {
          code: err.errclass === 'config' ? 'wecom_config_error' : 'wecom_rejected',
          message: hint ?? `WeCom rejected the message: ${err.errmsg}`,
          wecom_errcode: err.errcode,
        });
        log.warn('WeCom rejected the message permanently', { errcode: err.errcode, errclass: err.errclass });
        return 'ack';
      }
      default:
        // retryable, or a token error that persisted after one refresh
        return scheduleRetry(deps, r, msg, err);
    }
  }
  // Not WeCom's answer nor its transport: e.g. DynamoDB failing under the token cache or the quota counters.
  if (!(err instanceof WecomError)) log.error('unexpected error, message will be retried', { err });
  return scheduleRetry(deps, r, msg, err);
}

/**
 * Retry through SQS: the message stays in the queue (reported as a batch item failure) and becomes visible after
 * a full-jitter backoff. On the last allowed receive it is marked `dead`, since SQS moves it to the DLQ next.
 */
export async function scheduleRetry(
  deps: SenderDeps,
  r: IncomingRecord,
  msg: QueuedMessage | undefined,
  err: unknown,
): Promise<Outcome> {
  const at = new Date(nowOf(deps)).toISOString();
  const reached =
    err instanceof WecomTransportError ? err.reached : err instanceof WecomApiError ? 'no' : 'unknown';
  const detail =
    err instanceof WecomApiError
      ? `errcode ${err.errcode}`
      : err instanceof Error
        ? `${(err as { code?: string }).code ?? err.name}`
        : 'error';
  if (msg) {
    const last = r.receiveCount >= deps.maxReceiveCount;
    const attempt: FailedAttempt = {
      receive: r.receiveCount,
      reached,
      earlierMayHaveReached: msg.mayHaveReachedWecom === true,
      detail,
    };
    const change = last
      ? changes.die(at, attempt, {
          code: 'retries_exhausted',
          message: `gave up after ${r.receiveCount} attempts; last error: ${detail}`,
          ...(err instanceof WecomApiError ? { wecom_errcode: err.errcode } : {}),
        })
      : changes.retry(at, attempt);
    await deps.messages
      .transition(msg.id, change)
      .catch((e: unknown) => deps.logger.error('could not record the retry', { err: e, messageId: msg.id }));
    deps.metrics.count(last ? 'Dead' : 'Retried');
  }
  const delay = fullJitterSeconds(r.receiveCount, deps.retry ?? DEFAULT_RETRY, deps.random);
  await deps.queue
    .retryAfter(r.lane, r.receiptHandle, delay)
    .catch((e: unknown) =>
      deps.logger.warn('could not set the retry delay; the queue default applies', { err: e }),
    );
  return 'retry';
}

/**
 * Wait for quota without touching the DLQ count: a fresh copy (generation + 1) is enqueued with a delay and the
 * received one acknowledged. The record's generation tells a stale copy (its delete failed) to stand down.
 */
export async function defer(
  deps: SenderDeps,
  r: IncomingRecord,
  msg: QueuedMessage,
  retryAtMs: number,
  reason: string,
): Promise<Outcome> {
  const now = nowOf(deps);
  const jitter = (deps.random ?? Math.random)() * (deps.deferJitterSeconds ?? 3);
  const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil((retryAtMs - now) / 1000 + jitter)));
  const copy: QueuedMessage = { ...msg, generation: msg.generation + 1 };
  try {
    await deps.queue.enqueue(r.lane, copy, delaySeconds);
  } catch (err) {
    deps.logger.error('could not re-enqueue a deferred message; retrying it through SQS', {
      err,
      messageId: msg.id,
    });
    return scheduleRetry(deps, r, undefined, err);
  }
  const at = new Date(now).toISOString();
  const change = changes.defer(
    at,
    copy.generation,
    msg.mayHaveReachedWecom === true,
    `${reason}; retry in ${delaySeconds}s`,
  );
  await deps.messages
    .transition(msg.id, change)
    .catch((err: unknown) => deps.logger.error('could not record the deferral', { err, messageId: msg.id }));
  deps.metrics.count('Deferred', 1, { app: msg.app });
  return 'ack';
}

/** Fails the message for good (WeCom refused it, or no quota window could ever hold it). */
export async function fail(
  deps: SenderDeps,
  msg: QueuedMessage,
  error: { code: string; message: string; wecom_errcode?: number },
): Promise<void> {
  await deps.messages.transition(msg.id, changes.fail(new Date(nowOf(deps)).toISOString(), error));
  deps.metrics.count('Failed', 1, { app: msg.app });
}

/** The sender's clock (a test may set `deps.now`). */
export const nowOf = (deps: SenderDeps): number => (deps.now ?? Date.now)();
