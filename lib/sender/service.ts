import type { AppConfig, GatewayConfig } from '#lib/config/index.js';
import { countRecipients, toWecomSendBody } from '#lib/messages/index.js';
import {
  changes,
  decodeQueuedMessage,
  type FailedAttempt,
  mayHaveReachedWecomBefore,
  type QueuedMessage,
  receiptOf,
  sentRecord,
  TERMINAL_STATUSES,
} from '#lib/model/index.js';
import type { Logger, Metrics } from '#lib/observability/index.js';
import type { MessageQueue } from '#lib/queue/index.js';
import { MAX_DELAY_SECONDS } from '#lib/queue/index.js';
import type { LaneName } from '#lib/resources/index.js';
import type { MessageStore } from '#lib/store/index.js';
import {
  errcodeHint,
  type SendResponse,
  type TokenCache,
  type WecomApi,
  WecomApiError,
  WecomError,
  WecomTransportError,
} from '#lib/wecom/index.js';
import { DEFAULT_RETRY, fullJitterSeconds, type RetryPolicy } from './backoff.js';
import type { PauseCache } from './pause.js';
import type { QuotaDecision, QuotaDemand, QuotaGuard } from './quota.js';

/** One SQS record, as the sender sees it (no Lambda types in lib/). */
export interface IncomingRecord {
  /** SQS message id: what `batchItemFailures` names. */
  sqsMessageId: string;
  receiptHandle: string;
  body: string;
  receiveCount: number;
  lane: LaneName;
}

export interface SenderDeps {
  config: GatewayConfig;
  messages: MessageStore;
  queue: MessageQueue;
  tokens: TokenCache;
  quota: QuotaGuard;
  pauses: PauseCache;
  wecom: Pick<WecomApi, 'send'>;
  logger: Logger;
  metrics: Metrics;
  maxReceiveCount: number;
  retry?: RetryPolicy;
  /** Spreads deferred messages over this many seconds past the window start (WeCom: avoid :00 and :30). */
  deferJitterSeconds?: number;
  /** How long WeCom blocks an app after 45009 (a minute window: 60 s). */
  rateLimitPauseMs?: number;
  now?: () => number;
  random?: () => number;
}

/** What became of one record: acknowledged (deleted from the queue) or left for a retry. */
type Outcome = 'ack' | 'retry';

interface Sent {
  record: QueuedMessage;
  response: SendResponse;
  /** The SQS record it came in: retried as it is if recording `sent` fails. */
  incoming: IncomingRecord;
}

/**
 * A delivered message whose `sent` status could not be written comes back after at least this long (or the retry
 * cap, if lower): soon enough for the status to catch up after a short DynamoDB outage, not so soon that a longer
 * one uses up its receives and sends an already delivered message to the DLQ.
 */
const UNRECORDED_MIN_DELAY_SECONDS = 30;

/**
 * Delivers one SQS batch. Records are handled concurrently; one bad record never fails the others. Returns the
 * SQS message ids to report as `batchItemFailures` (their visibility was already set to the retry delay).
 *
 * @example const { failures } = await processBatch(deps, records);
 */
export async function processBatch(
  deps: SenderDeps,
  records: IncomingRecord[],
): Promise<{ failures: string[] }> {
  const firstDeliveries: Sent[] = [];
  const seen = new Set<string>();
  const outcomes = await Promise.all(
    records.map(async (r): Promise<Outcome> => {
      try {
        return await processRecord(deps, r, seen, firstDeliveries);
      } catch (err) {
        deps.logger.error('unexpected error, message will be retried', { err, sqsMessageId: r.sqsMessageId });
        // With the message, so the last allowed receive still marks it dead.
        return scheduleRetry(deps, r, decodeQueuedMessage(r.body), err);
      }
    }),
  );
  const failures = records.filter((_, i) => outcomes[i] === 'retry').map((r) => r.sqsMessageId);
  if (firstDeliveries.length > 0) {
    // First deliveries: the record is exactly what ingest stored, so one BatchWriteItem records them all.
    const now = new Date(nowOf(deps)).toISOString();
    const unwritten = await deps.messages
      .putSentBatch(firstDeliveries.map((s) => sentRecord(s.record, receiptOf(s.response), now)))
      .catch((err: unknown) => {
        deps.logger.error('recording sent messages failed; they will be re-checked on redelivery', { err });
        return firstDeliveries.map((s) => s.record.id);
      });
    // Not recorded → let SQS redeliver: the redelivery reads the record, resends with WeCom's duplicate check on,
    // and WeCom drops the repeat. Nothing is lost and nothing is shown twice. The redelivery comes after the retry
    // backoff, not after the lane's whole visibility timeout, so the status catches up soon after DynamoDB does.
    const notRecorded = new Set(unwritten);
    const retry = deps.retry ?? DEFAULT_RETRY;
    await Promise.all(
      firstDeliveries
        .filter((sent) => notRecorded.has(sent.record.id))
        .map(({ incoming: r }) => {
          failures.push(r.sqsMessageId);
          const delay = Math.max(
            fullJitterSeconds(r.receiveCount, retry, deps.random),
            Math.min(UNRECORDED_MIN_DELAY_SECONDS, retry.capSeconds),
          );
          return deps.queue
            .retryAfter(r.lane, r.receiptHandle, delay)
            .catch((e: unknown) =>
              deps.logger.warn('could not set the retry delay; the queue default applies', { err: e }),
            );
        }),
    );
  }
  return { failures };
}

async function processRecord(
  deps: SenderDeps,
  r: IncomingRecord,
  seen: Set<string>,
  firstDeliveries: Sent[],
): Promise<Outcome> {
  const msg = decodeQueuedMessage(r.body);
  if (!msg) {
    deps.logger.error('dropping unparsable queue message', { sqsMessageId: r.sqsMessageId });
    return 'ack';
  }
  const log = deps.logger.child({ messageId: msg.id, app: msg.app, receiveCount: r.receiveCount });
  // SQS standard queues may hand the same message twice, even in one batch.
  const copyKey = `${msg.id}#${msg.generation}`;
  if (seen.has(copyKey)) return 'ack';
  seen.add(copyKey);

  const app = deps.config.apps[msg.app];
  if (!app) {
    await fail(deps, msg, { code: 'app_not_configured', message: `app ${msg.app} is no longer configured` });
    return 'ack';
  }

  // Redelivery: the only case that pays a read. A first delivery trusts its body (a deferred copy carries what the
  // attempts before its deferral left unknown).
  let duplicateCheck = msg.mayHaveReachedWecom === true;
  if (r.receiveCount > 1) {
    const stored = await deps.messages.get(msg.id);
    if (!stored) {
      log.warn('record gone (retention expired?); dropping redelivered message');
      return 'ack';
    }
    if (TERMINAL_STATUSES.has(stored.status) || stored.generation > msg.generation) {
      deps.metrics.count('DuplicateSuppressed');
      log.info('already handled; acknowledged without calling WeCom', { status: stored.status });
      return 'ack';
    }
    duplicateCheck = mayHaveReachedWecomBefore(stored, msg.generation, r.receiveCount);
  } else if (msg.generation > 0 && !(await deps.messages.claimCopy(msg.id, msg.generation))) {
    // Two copies of one deferral (an SDK retry of a SendMessage that had succeeded): only one may send.
    deps.metrics.count('DuplicateSuppressed');
    log.info('another copy of this deferral is already being handled; acknowledged');
    return 'ack';
  }

  // From here on, `attempt` tells every outcome (retry, deferral) whether an earlier attempt may have reached WeCom.
  const attempt: QueuedMessage = duplicateCheck ? { ...msg, mayHaveReachedWecom: true } : msg;
  const pausedUntil = await deps.pauses.pausedUntil(msg.app);
  if (pausedUntil) return defer(deps, r, attempt, pausedUntil, 'app paused after 45009');

  const demand = quotaDemand(msg, app);
  const body = toWecomSendBody(msg.request, app.agentId, { forceDuplicateCheck: duplicateCheck });
  let sent: { response: SendResponse } | { refused: Extract<QuotaDecision, { ok: false }> };
  try {
    // Token first, then quota: waiting for a token (another container refreshing) must not push the send past the
    // quota window it was charged to. After a token refresh the quota is reserved again, in the window the resend
    // lands in.
    sent = await deps.tokens.withToken(app, async (token) => {
      const decision = await deps.quota.acquire(demand);
      if (!decision.ok) return { refused: decision };
      return { response: await deps.wecom.send(token, body) };
    });
  } catch (err) {
    return handleSendError(deps, r, attempt, err, log);
  }
  if ('refused' in sent) return refused(deps, r, attempt, sent.refused);
  const { response } = sent;
  deps.metrics.count('Sent');
  if (r.receiveCount === 1 && msg.generation === 0) {
    firstDeliveries.push({ record: msg, response, incoming: r });
  } else {
    const at = new Date(nowOf(deps)).toISOString();
    try {
      await deps.messages.transition(msg.id, changes.send(at, receiptOf(response)));
    } catch (err) {
      // Sent but not recorded: SQS redelivers after the visibility timeout, the redelivery finds no proof that
      // this attempt missed WeCom, and resends with WeCom's duplicate check on. Never marked dead for it.
      log.error('sent, but recording it failed; redelivery will resend with duplicate check', { err });
      return 'retry';
    }
  }
  log.info('sent', { msgid: response.msgid, duplicateCheck });
  return 'ack';
}

/**
 * Who the per-member limits apply to. Parties, tags and @all expand inside WeCom where the gateway cannot count
 * their members, so each is charged as one pseudo-member: it bounds how often one party is messaged per window.
 */
function quotaDemand(msg: QueuedMessage, app: AppConfig): QuotaDemand {
  const { touser, toparty, totag } = msg.request.recipients;
  return {
    app: msg.app,
    quota: app.quota,
    priority: msg.priority,
    members: [
      ...touser.map((u) => (u === '@all' ? '~all' : u)),
      ...toparty.map((p) => `~party:${p}`),
      ...totag.map((t) => `~tag:${t}`),
    ],
    personTimes: countRecipients(msg.request),
  };
}

/** Over quota: wait for the window, or fail a message no window could ever hold. */
async function refused(
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

async function handleSendError(
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
async function scheduleRetry(
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
async function defer(
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
  deps.metrics.count('Deferred');
  return 'ack';
}

async function fail(
  deps: SenderDeps,
  msg: QueuedMessage,
  error: { code: string; message: string; wecom_errcode?: number },
): Promise<void> {
  await deps.messages.transition(msg.id, changes.fail(new Date(nowOf(deps)).toISOString(), error));
  deps.metrics.count('Failed');
}

const nowOf = (deps: SenderDeps): number => (deps.now ?? Date.now)();
