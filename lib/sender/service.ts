import type { AppConfig } from '#lib/config/index.js';
import { countRecipients, toWecomSendBody } from '#lib/messages/index.js';
import {
  changes,
  decodeQueuedMessage,
  mayHaveReachedWecomBefore,
  type QueuedMessage,
  receiptOf,
  sentRecord,
  TERMINAL_STATUSES,
} from '#lib/model/index.js';
import type { Logger } from '#lib/observability/index.js';
import type { SendResponse } from '#lib/wecom/index.js';
import { DEFAULT_RETRY, fullJitterSeconds } from './backoff.js';
import { defer, fail, handleSendError, nowOf, refused, scheduleRetry } from './outcomes.js';
import type { QuotaDecision, QuotaDemand } from './quota.js';
import type { IncomingRecord, Outcome, SenderDeps, Sent } from './types.js';

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

  const duplicateCheck = await duplicateCheckFor(deps, r, msg, log);
  if (duplicateCheck === 'ack') return 'ack';

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
  deps.metrics.count('Sent', 1, { app: msg.app });
  log.info('sent', { msgid: sent.response.msgid, duplicateCheck });
  if (r.receiveCount === 1 && msg.generation === 0) {
    // First deliveries are recorded together, in one batch write (processBatch).
    firstDeliveries.push({ record: msg, response: sent.response, incoming: r });
    return 'ack';
  }
  return recordSent(deps, msg, sent.response, log);
}

/** Records a redelivered or deferred message `sent`. */
async function recordSent(
  deps: SenderDeps,
  msg: QueuedMessage,
  response: SendResponse,
  log: Logger,
): Promise<Outcome> {
  const at = new Date(nowOf(deps)).toISOString();
  try {
    await deps.messages.transition(msg.id, changes.send(at, receiptOf(response)));
    return 'ack';
  } catch (err) {
    // Sent but not recorded: SQS redelivers after the visibility timeout, the redelivery finds no proof that
    // this attempt missed WeCom, and resends with WeCom's duplicate check on. Never marked dead for it.
    log.error('sent, but recording it failed; redelivery will resend with duplicate check', { err });
    return 'retry';
  }
}

/**
 * Whether this delivery must go out with WeCom's duplicate check on, or `ack` when it must not go out at all: its
 * message was already handled, or another copy of its deferral sends it. A redelivery is the only case that pays a
 * read (the record's redelivery proof, lib/model `mayHaveReachedWecomBefore`); a first delivery trusts its body (a
 * deferred copy carries what the attempts before its deferral left unknown).
 */
async function duplicateCheckFor(
  deps: SenderDeps,
  r: IncomingRecord,
  msg: QueuedMessage,
  log: Logger,
): Promise<boolean | 'ack'> {
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
    return mayHaveReachedWecomBefore(stored, msg.generation, r.receiveCount);
  }
  if (msg.generation > 0 && !(await deps.messages.claimCopy(msg.id, msg.generation))) {
    // Two copies of one deferral (an SDK retry of a SendMessage that had succeeded): only one may send.
    deps.metrics.count('DuplicateSuppressed');
    log.info('another copy of this deferral is already being handled; acknowledged');
    return 'ack';
  }
  return msg.mayHaveReachedWecom === true;
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
