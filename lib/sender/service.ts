import { channelConfig } from '#lib/config/index.js';
import { channelLabel, channelOf, type Recipients, toWecomSendBody } from '#lib/messages/index.js';
import {
  decodeQueuedMessage,
  decodeReleaseNotice,
  hasNextSegment,
  type MessageRecord,
  receiptOf,
  segmentCompleted,
  segmentOf,
  segmentRequest,
} from '#lib/model/index.js';
import {
  earliestHeld,
  type NeverDecision,
  type QuotaDemand,
  type SendDecision,
  type WaitDecision,
} from '#lib/quota/index.js';
import { type SendResponse, WecomTransportError } from '#lib/wecom/index.js';
import { DEFAULT_RETRY, fullJitterSeconds } from './backoff.js';
import { claimToSend, isFirstCopy } from './claim.js';
import { deadlineOf, pastProtection } from './deadline.js';
import { type BroadcastSizing, copyRecipients, quotaDemand, requestFor } from './demand.js';
import { defer, endAtDeadline, fail, refused, scheduleRetry } from './outcomes.js';
import { restOf, retrySplit, sentBefore, sentPart, sizeFor } from './parts.js';
import { appTarget, handleSendError, waitOutPause } from './pause-policy.js';
import { duplicateCheckFor, outcomeUnknown, probeInconclusive, recordSent } from './recording.js';
import { release } from './release.js';
import { sendByRobot } from './robot.js';
import { nextSegment } from './segments.js';
import {
  type Attempt,
  type AttemptFailure,
  type IncomingRecord,
  isAppCopy,
  isRobotCopy,
  nowOf,
  type Outcome,
  type Received,
  type SenderDeps,
  type Sent,
  sleep,
} from './types.js';

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
  const ordered = inSlotOrder(records);
  const outcomes = await Promise.all(
    ordered.map(async (r): Promise<Outcome> => {
      try {
        return await processRecord(deps, r, seen, firstDeliveries);
      } catch (err) {
        deps.logger.error('unexpected error, message will be retried', { err, sqsMessageId: r.sqsMessageId });
        // Before `message/send` (nothing after it throws): this attempt did not reach WeCom.
        return scheduleRetry(
          { deps, incoming: r, msg: decodeQueuedMessage(r.body), startedAtMs: nowOf(deps) },
          { error: err, inDoubt: false },
        );
      }
    }),
  );
  const failures = ordered.filter((_, i) => outcomes[i] === 'retry').map((r) => r.sqsMessageId);
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
  deps.logger.info('batch handled', {
    records: records.length,
    firstDeliveries: firstDeliveries.length,
    retried: failures.length,
  });
  return { failures };
}

/**
 * The batch in the order its sends are due: copies holding quota slots by their earliest slot, the others as
 * accepted. Records are handled concurrently, but each reaches the quota guard (and WeCom) in this order, so a
 * member's messages that arrive in one batch keep the order of their slots.
 */
function inSlotOrder(records: IncomingRecord[]): IncomingRecord[] {
  const key = (r: IncomingRecord) => {
    const m = decodeQueuedMessage(r.body);
    return earliestHeld(m?.part?.reservations) ?? (m ? Date.parse(m.createdAt) : 0);
  };
  const keyed = records.map((r, i) => ({ r, i, k: key(r) }));
  return keyed.sort((a, b) => a.k - b.k || a.i - b.i).map((x) => x.r);
}

async function processRecord(
  deps: SenderDeps,
  r: IncomingRecord,
  seen: Set<string>,
  firstDeliveries: Sent[],
): Promise<Outcome> {
  const msg = decodeQueuedMessage(r.body);
  if (!msg) {
    const notice = decodeReleaseNotice(r.body);
    if (notice) return release(deps, r, notice.release.id);
    deps.logger.error('dropping unparsable queue message', { sqsMessageId: r.sqsMessageId });
    return 'ack';
  }
  const channel = channelOf(msg);
  const log = deps.logger.child({
    messageId: msg.id,
    [channel.kind]: channel.name,
    receiveCount: r.receiveCount,
  });
  // SQS standard queues may hand the same message twice, even in one batch.
  const copyKey = `${msg.id}#${msg.generation}`;
  if (seen.has(copyKey)) return 'ack';
  seen.add(copyKey);

  const copy: Received = { deps, incoming: r, msg };
  const config = channelConfig(deps.config, channel);
  if (!config) {
    await fail(copy, {
      code: `${channel.kind}_not_configured`,
      message: `${channelLabel(channel)} is no longer configured`,
    });
    return 'ack';
  }
  const startedAtMs = nowOf(deps);
  const deadline = deadlineOf(msg, config);
  if (startedAtMs >= deadline.atMs) {
    await endAtDeadline(copy, deadline, 'still queued when its time ran out');
    return 'ack';
  }

  const check = await duplicateCheckFor(copy, log);
  if (check === 'ack') return 'ack';
  // Split content: an earlier receive sent this copy's part to everyone, but its next part was not queued.
  if (check.stored && hasNextSegment(msg) && segmentCompleted(check.stored, segmentOf(msg))) {
    return nextSegment({ deps, incoming: r, msg, log }, undefined);
  }
  // From here on, `received.msg` tells every outcome (retry, deferral) whether the message is in doubt.
  const received: Received = check.inDoubt ? { ...copy, msg: { ...msg, inDoubt: check.inDoubt } } : copy;

  if (msg.notBeforeMs !== undefined && msg.notBeforeMs - startedAtMs > deps.quota.inlineWaitMs) {
    // A wait longer than SQS's longest delay: one more hop, still holding the slots.
    return defer(received, {
      untilMs: msg.notBeforeMs,
      reason: msg.part?.reservations ? 'waiting for its quota slots' : 'waiting for its time',
      part: msg.part,
    });
  }
  if (msg.schedule && msg.notBeforeMs !== undefined && msg.notBeforeMs > startedAtMs) {
    // A scheduled copy never goes before its release: SQS rounds delays up, but clocks differ a little.
    await (deps.sleep ?? sleep)(msg.notBeforeMs - startedAtMs);
  }
  // A first receive of a copy of generation ≥ 1 claimed in duplicateCheckFor.
  const claim = { held: msg.generation > 0 && r.receiveCount === 1 };
  const inDoubtMsg = received.msg;
  if (isRobotCopy(inDoubtMsg)) {
    return sendByRobot(
      { ...received, msg: inDoubtMsg },
      { log, startedAtMs, stored: check.stored, firstDeliveries, claim },
    );
  }
  const app = isAppCopy(inDoubtMsg) ? deps.config.apps[inDoubtMsg.app] : undefined;
  // Never taken: a body names an app or a robot (decodeQueuedMessage), and the app's config was found above.
  if (!isAppCopy(inDoubtMsg) || !app) return 'ack';
  const target = appTarget(inDoubtMsg.app, app);
  const gate = await deps.pauses.gate(inDoubtMsg.app, target.configHash);
  if (gate.state === 'paused') return waitOutPause({ ...received, target }, gate);

  const attempt: Attempt = { ...received, msg: inDoubtMsg, app, target, gate, log, startedAtMs, claim };
  if (pastProtection(attempt.msg, check.inDoubt?.since, startedAtMs)) return outcomeUnknown(attempt);
  return send(attempt, { firstDeliveries, stored: check.stored });
}

interface SendContext {
  /** Where a first delivery is collected, to be recorded with the batch's others (processBatch). */
  firstDeliveries: Sent[];
  /** The record, when this delivery had to read it (a redelivery). */
  stored?: MessageRecord | undefined;
}

type Granted = SendDecision;

/** What one go at `message/send` came to, token and quota included. */
type SendResult =
  /** WeCom took it: `touser` are the users this send went to. */
  | { kind: 'sent'; response: SendResponse; decision: Granted; touser: string[]; duplicateCheck: boolean }
  /** The quota guard refused it: nothing was sent. */
  | { kind: 'refused'; decision: WaitDecision | NeverDecision }
  /** A send to part of the recipients (`touser`) is in doubt: its retry must be the very same request. */
  | { kind: 'splitInDoubt'; touser: string[]; decision: Granted }
  /** The message was canceled (or another copy sends it): its claim failed, nothing was sent. */
  | { kind: 'standDown' }
  | ({ kind: 'failed' } & AttemptFailure);

/**
 * Sends one message (or the part of it whose members have a slot now): the recipients this copy still owes, what
 * its broadcasts cost, then token, quota and `message/send` ({@link trySend}); the result is recorded, or handed to
 * the pause policy and outcomes.ts.
 */
async function send(a: Attempt, ctx: SendContext): Promise<Outcome> {
  const { deps, msg, app, log } = a;
  const recipients = copyRecipients(msg, sentBefore(ctx.stored, segmentOf(msg)));
  if (recipients.touser.length + recipients.toparty.length + recipients.totag.length === 0) {
    log.info('every recipient of this copy already got the message in an earlier part');
    await probeInconclusive(a);
    // Split content: this part reached everyone on an earlier receive, whose next part could not be queued.
    return hasNextSegment(msg) ? nextSegment(a, undefined) : 'ack';
  }
  let sizing: BroadcastSizing;
  try {
    sizing = await sizeFor(deps, app, recipients);
  } catch (error) {
    return handleSendError(a, { error, inDoubt: false });
  }
  if (sizing.unsized.length > 0) {
    await probeInconclusive(a);
    await fail(a, {
      code: 'broadcast_unsized',
      message: `cannot count whom ${sizing.unsized.join(', ')} reaches: the app may not read WeCom's contacts; grant it, or set apps.${msg.app}.broadcast sizes`,
    });
    return 'ack';
  }
  const result = await trySend(a, recipients, quotaDemand(msg, app, recipients, sizing));
  switch (result.kind) {
    case 'sent':
      return delivered(a, recipients, result, ctx.firstDeliveries);
    case 'refused':
      await probeInconclusive(a);
      return refused(a, result.decision);
    case 'standDown':
      await probeInconclusive(a);
      a.log.info('not sent: the message was canceled, or another copy holds the claim to send');
      return 'ack';
    case 'splitInDoubt':
      await probeInconclusive(a);
      return retrySplit(a, { recipients, attempted: result.touser, held: result.decision.rest?.held ?? {} });
    case 'failed':
      return handleSendError(a, result);
  }
}

/**
 * Token first, then quota: waiting for a token (another container refreshing) must not push the send past the
 * quota slot it was given. After a token refresh the quota is reserved again, for the resend. Only `message/send`
 * itself can leave the attempt in doubt; whatever else fails (token, quota, DynamoDB) fails before it.
 */
async function trySend(a: Attempt, recipients: Recipients, demand: QuotaDemand): Promise<SendResult> {
  const { deps, msg, app } = a;
  try {
    return await deps.tokens.withToken(app, async (token): Promise<SendResult> => {
      const decision = await deps.quota.acquire(demand);
      if (decision.kind !== 'send') return { kind: 'refused', decision };
      if (!(await claimToSend(a))) {
        await deps.quota.report(decision, 'not-sent');
        return { kind: 'standDown' };
      }
      const request = requestFor(segmentRequest(msg), recipients, decision.members, demand.splittable);
      const body = toWecomSendBody(request, app.agentId, {
        ...(msg.duplicateCheckSeconds !== undefined
          ? { duplicateCheckSeconds: msg.duplicateCheckSeconds }
          : {}),
        forceDuplicateCheck: msg.inDoubt !== undefined,
      });
      const touser = request.recipients.touser;
      try {
        const response = await deps.wecom.send(token, body);
        return {
          kind: 'sent',
          response,
          decision,
          touser,
          duplicateCheck: body.enable_duplicate_check === 1,
        };
      } catch (error) {
        if (!(error instanceof WecomTransportError && error.inDoubt)) {
          // WeCom answered an error, or the request never left: nobody got it, so what was reserved for it goes
          // back (a resend after a token refresh, or a retry, need not wait a pace). Thrown, so withToken
          // refreshes a token WeCom rejected and calls again.
          await deps.quota.report(decision, 'not-sent');
          throw error;
        }
        await deps.quota.report(decision, 'in-doubt');
        return decision.rest
          ? { kind: 'splitInDoubt', touser, decision }
          : { kind: 'failed', error, inDoubt: true };
      }
    });
  } catch (error) {
    // Thrown before `message/send` was called (token, quota, DynamoDB), or answered by WeCom: not in doubt.
    return { kind: 'failed', error, inDoubt: false };
  }
}

/** WeCom took the send: a probe ends the app's pause; then it is recorded, or the rest of its members wait. */
async function delivered(
  a: Attempt,
  recipients: Recipients,
  sent: Extract<SendResult, { kind: 'sent' }>,
  firstDeliveries: Sent[],
): Promise<Outcome> {
  const { deps, incoming: r, msg, gate, log } = a;
  if (gate.state === 'probe') {
    log.info('probe went through: the app is no longer paused', { kind: gate.pause.kind });
    await deps.pauses
      .probeSucceeded(msg.app, gate.pause)
      .catch((err: unknown) => log.warn('could not end the pause; it runs out by itself', { err }));
  }
  deps.metrics.count('Sent', 1, { app: msg.app });
  // Debug, not info: a line per message was the largest single cost of the sender's CPU (the writes to stdout), and
  // the message's record holds the same (status, msgid, parts); the batch's line below counts what went out.
  log.debug('sent', {
    msgid: sent.response.msgid,
    duplicateCheck: sent.duplicateCheck,
    recipients: sent.touser.length,
  });
  const rest = restOf(msg, recipients, sent.decision, nowOf(deps));
  if (rest) return sentPart(a, sent, rest);
  if (hasNextSegment(msg)) return nextSegment(a, sent);
  if (r.receiveCount === 1 && isFirstCopy(msg) && !msg.part) {
    // First deliveries are recorded together, in one batch write (processBatch).
    firstDeliveries.push({ record: msg, response: sent.response, incoming: r });
    return 'ack';
  }
  return recordSent(a, sent.response, msg.part ? sent.touser : undefined);
}
