import type { AppConfig } from '#lib/config/index.js';
import { countRecipients, foldUserId, toWecomSendBody } from '#lib/messages/index.js';
import {
  changes,
  decodeQueuedMessage,
  mayHaveReachedWecomBefore,
  type QueuedMessage,
  receiptOf,
  TERMINAL_STATUSES,
} from '#lib/model/index.js';
import type { Logger } from '#lib/observability/index.js';
import { type SendResponse, WecomTransportError } from '#lib/wecom/index.js';
import { DEFAULT_RETRY, fullJitterSeconds } from './backoff.js';
import { deadlineOf, pastProtection } from './deadline.js';
import { configHashOf, heldByPause } from './hold.js';
import { endAtDeadline, fail, handleSendError, nowOf, refused, scheduleRetry } from './outcomes.js';
import type { Gate } from './pause.js';
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
        // Before `message/send` (nothing after it throws): this attempt did not reach WeCom.
        return scheduleRetry(deps, r, decodeQueuedMessage(r.body), err, {
          startedAtMs: nowOf(deps),
          reached: 'no',
        });
      }
    }),
  );
  const failures = records.filter((_, i) => outcomes[i] === 'retry').map((r) => r.sqsMessageId);
  if (firstDeliveries.length > 0) {
    // First deliveries: one BatchWriteItem records them all, as items beside their records (never overwriting
    // them, so a record failed or recalled meanwhile stays so: lib/model `withFirstDelivery`).
    const now = new Date(nowOf(deps)).toISOString();
    const unwritten = await deps.messages
      .putFirstDeliveries(
        firstDeliveries.map((s) => ({
          id: s.record.id,
          delivery: { at: now, receipt: receiptOf(s.response) },
          expiresAt: s.record.expiresAt,
          // So the store's status listener can tell the business (a message.sent webhook).
          origin: s.record,
        })),
      )
      .catch((err: unknown) => {
        deps.logger.error('recording sent messages failed; they will be re-checked on redelivery', { err });
        return firstDeliveries.map((s) => s.record.id);
      });
    // Not recorded → let SQS redeliver: the redelivery reads the record and resends the same request, which WeCom's
    // duplicate check drops. Nothing is lost and nothing is shown twice. The redelivery comes after the retry
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
  const startedAtMs = nowOf(deps);
  const deadline = deadlineOf(msg, app);
  if (startedAtMs >= deadline.atMs) {
    await endAtDeadline(deps, msg, deadline, 'still queued when its time ran out');
    return 'ack';
  }

  const check = await duplicateCheckFor(deps, r, msg, log);
  if (check === 'ack') return 'ack';
  // From here on, `attempt` tells every outcome (retry, deferral) whether an earlier attempt may have reached WeCom.
  const attempt: QueuedMessage =
    check.since !== undefined ? { ...msg, mayHaveReachedWecom: true, mayHaveReachedAt: check.since } : msg;

  const gate = await deps.pauses.gate(msg.app, configHashOf(app));
  if (gate.state === 'paused') return heldByPause(deps, r, attempt, app, gate);

  if (pastProtection(attempt, check.since, startedAtMs)) return outcomeUnknown(deps, attempt, gate, log);
  return send(deps, r, attempt, app, gate, { startedAtMs, firstDeliveries, log });
}

/** Sends one message: token, quota, `message/send`; then records it (or hands the failure to outcomes.ts). */
async function send(
  deps: SenderDeps,
  r: IncomingRecord,
  msg: QueuedMessage,
  app: AppConfig,
  gate: Gate,
  ctx: { startedAtMs: number; firstDeliveries: Sent[]; log: Logger },
): Promise<Outcome> {
  const { log } = ctx;
  const demand = quotaDemand(msg, app);
  const body = toWecomSendBody(msg.request, app.agentId, {
    ...(msg.duplicateCheckSeconds !== undefined ? { duplicateCheckSeconds: msg.duplicateCheckSeconds } : {}),
    forceDuplicateCheck: msg.mayHaveReachedWecom === true,
  });
  let sent: { response: SendResponse } | { refused: Extract<QuotaDecision, { ok: false }> };
  let sendError: unknown;
  try {
    // Token first, then quota: waiting for a token (another container refreshing) must not push the send past the
    // quota window it was charged to. After a token refresh the quota is reserved again, in the window the resend
    // lands in.
    sent = await deps.tokens.withToken(app, async (token) => {
      const decision = await deps.quota.acquire(demand);
      if (!decision.ok) return { refused: decision };
      try {
        return { response: await deps.wecom.send(token, body) };
      } catch (err) {
        sendError = err;
        throw err;
      }
    });
  } catch (err) {
    // Only `message/send` itself may have reached WeCom; a token, quota or DynamoDB error happened before it.
    const reached = err === sendError && err instanceof WecomTransportError ? err.reached : 'no';
    return handleSendError(deps, r, msg, app, err, { startedAtMs: ctx.startedAtMs, reached, gate, log });
  }
  if ('refused' in sent) {
    if (gate.state === 'probe')
      await deps.pauses.probeInconclusive(msg.app, gate.pause).catch(() => undefined);
    return refused(deps, r, msg, sent.refused);
  }
  if (gate.state === 'probe') {
    log.info('probe went through: the app is no longer paused', { kind: gate.pause.kind });
    await deps.pauses
      .probeSucceeded(msg.app, gate.pause)
      .catch((err: unknown) => log.warn('could not end the pause; it runs out by itself', { err }));
  }
  deps.metrics.count('Sent', 1, { app: msg.app });
  log.info('sent', { msgid: sent.response.msgid, duplicateCheck: body.enable_duplicate_check === 1 });
  if (r.receiveCount === 1 && msg.generation === 0) {
    // First deliveries are recorded together, in one batch write (processBatch).
    ctx.firstDeliveries.push({ record: msg, response: sent.response, incoming: r });
    return 'ack';
  }
  return recordSent(deps, msg, sent.response, log);
}

/**
 * An attempt may have reached WeCom, but a resend now would fall outside WeCom's duplicate-check interval and could
 * be delivered twice: the message is not resent, and fails with a code that says its delivery is unknown.
 */
async function outcomeUnknown(
  deps: SenderDeps,
  msg: QueuedMessage,
  gate: Gate,
  log: Logger,
): Promise<Outcome> {
  if (gate.state === 'probe') await deps.pauses.probeInconclusive(msg.app, gate.pause).catch(() => undefined);
  log.warn(
    'not resent: an earlier attempt may have reached WeCom and the duplicate check no longer covers it',
  );
  await fail(deps, msg, {
    code: 'delivery_unknown',
    message: `an attempt that started at ${msg.mayHaveReachedAt} may have reached WeCom (its answer was lost); a resend now would be outside WeCom's duplicate check interval and might be delivered twice, so it was not resent`,
  });
  return 'ack';
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
 * Whether an earlier attempt may have reached WeCom (`since`: when the first such attempt started), or `ack` when
 * this copy must not go out at all: its message was already handled, or another copy of its deferral sends it. A
 * redelivery is the only case that pays a read (the record's redelivery proof, lib/model
 * `mayHaveReachedWecomBefore`); a first delivery trusts its body (a deferred copy carries what the attempts before
 * its deferral left unknown).
 */
async function duplicateCheckFor(
  deps: SenderDeps,
  r: IncomingRecord,
  msg: QueuedMessage,
  log: Logger,
): Promise<{ since?: string } | 'ack'> {
  const carried = msg.mayHaveReachedWecom ? (msg.mayHaveReachedAt ?? msg.createdAt) : undefined;
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
    if (!mayHaveReachedWecomBefore(stored, msg.generation, r.receiveCount)) return {};
    // Without a recorded failure, the previous receive of this copy (a crash, an unrecorded send) is the one that
    // may have reached WeCom: no earlier than this copy's first receive.
    const unrecorded =
      stored.mayHaveReachedWecom === true
        ? undefined
        : new Date(r.firstReceivedAtMs ?? Date.parse(msg.createdAt)).toISOString();
    return { since: earliest(stored.mayHaveReachedAt, carried, unrecorded) ?? msg.createdAt };
  }
  if (msg.generation > 0 && !(await deps.messages.claimCopy(msg.id, msg.generation))) {
    // Two copies of one deferral (an SDK retry of a SendMessage that had succeeded): only one may send.
    deps.metrics.count('DuplicateSuppressed');
    log.info('another copy of this deferral is already being handled; acknowledged');
    return 'ack';
  }
  return carried !== undefined ? { since: carried } : {};
}

const earliest = (...times: (string | undefined)[]): string | undefined =>
  times.filter((t): t is string => t !== undefined).sort()[0];

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
    // Case folded (WeCom userids are case-insensitive): bodies queued before ingest folded may still name one
    // member twice.
    members: [
      ...new Set(touser.map((u) => (u === '@all' ? '~all' : foldUserId(u)))),
      ...toparty.map((p) => `~party:${p}`),
      ...totag.map((t) => `~tag:${t}`),
    ],
    personTimes: countRecipients(msg.request),
  };
}
