import { createHash } from 'node:crypto';
import type { RobotConfig } from '#lib/config/index.js';
import { channelKey, type RobotMessageRequest } from '#lib/messages/index.js';
import { hasNextSegment, type MessageRecord, segmentRequest } from '#lib/model/index.js';
import type { Logger } from '#lib/observability/index.js';
import { type QuotaDecision, type QuotaDemand, ROBOT_MEMBER, robotQuota } from '#lib/quota/index.js';
import { type RobotUpload, type SendResponse, WecomApiError, WecomTransportError } from '#lib/wecom/index.js';
import { claimToSend, isFirstCopy } from './claim.js';
import { refused, scheduleRetry } from './outcomes.js';
import { configErrorWaitMs, handleSendError, waitOutPause } from './pause-policy.js';
import { outcomeUnknown, probeInconclusive, recordSent } from './recording.js';
import { nextSegment } from './segments.js';
import {
  type ChannelAttempt,
  dimensionsOf,
  type Outcome,
  type PauseTarget,
  type Received,
  type RobotQueuedMessage,
  type Sent,
} from './types.js';

/*
 * A group robot's message (`webhook/send`): no token, one quota line (the robot's minute, lib/quota robots.ts), its
 * own pause under its channel key, and a file or voice uploaded through the robot's own upload_media first (once:
 * lib/wecom RobotMediaCache). WeCom gives no msgid and has no duplicate check for robots, so a send whose answer was
 * lost is never sent again: it ends `failed` with `delivery_unknown` rather than risk showing the group a message
 * twice (lib/sender `pastProtection`).
 */

/** WeCom: "invalid media_id" — the robot's media id expired, or was never this robot's. */
const INVALID_MEDIA_ID = 40007;

/** A robot's webhook answers no msgid: the receipt says so by an empty one. */
const NO_MSGID: SendResponse = { msgid: '' };

/** An attempt of a robot's message: built once in `sendByRobot`, when its robot's pause is known. */
interface RobotAttempt extends ChannelAttempt {
  msg: RobotQueuedMessage;
  robot: RobotConfig;
}

/** A robot's pause target: kept under its channel key, its fix fingerprinted over its key (never the key itself). */
export const robotTarget = (name: string, robot: RobotConfig): PauseTarget => ({
  channel: { kind: 'robot', name },
  configHash: createHash('sha256').update(`robot\n${robot.key}`).digest('hex').slice(0, 16),
  configErrorWaitMs: configErrorWaitMs(robot),
});

/** What a robot's copy asks of the quota: one unit on the robot's line, held slots included. */
export function robotDemand(msg: RobotQueuedMessage, robot: RobotConfig): QuotaDemand {
  return {
    app: channelKey({ kind: 'robot', name: msg.robot }),
    quota: robotQuota(robot.quota),
    priority: msg.priority,
    members: [ROBOT_MEMBER],
    splittable: false,
    extraPersonTimes: 0,
    broadcasts: 0,
    broadcastShare: 0,
    ...(msg.part?.reservations ? { held: msg.part.reservations } : {}),
  };
}

/** The upload a file or voice given as bytes needs before it can be sent; undefined for anything else. */
export function uploadOf(request: RobotMessageRequest): RobotUpload | undefined {
  if (request.msgtype !== 'file' && request.msgtype !== 'voice') return undefined;
  const { base64, filename } = request.content;
  if (typeof base64 !== 'string') return undefined;
  const name = typeof filename === 'string' ? filename : `voice.amr`;
  return { type: request.msgtype, filename: name, bytes: Buffer.from(base64, 'base64') };
}

interface RobotContext {
  log: Logger;
  startedAtMs: number;
  /** The record, when this delivery had to read it (a redelivery). */
  stored: MessageRecord | undefined;
  /** Where a first delivery is collected, to be recorded with the batch's others (service.ts processBatch). */
  firstDeliveries: Sent[];
  /** Whether the copy holds the claim to send on its record (claim.ts), as an app's attempt does. */
  claim: { held: boolean };
}

/**
 * Delivers a robot's copy: its pause, then (for a file or voice) its media id, the quota slot on the robot's line,
 * and `webhook/send`; the outcome is recorded like an app's. Called by `processRecord` once the copy may go.
 */
export async function sendByRobot(
  c: Received & { msg: RobotQueuedMessage },
  ctx: RobotContext,
): Promise<Outcome> {
  const { deps, msg } = c;
  const robot = deps.config.robots?.[msg.robot];
  // processRecord found the robot configured; a reload may have removed it since.
  if (!robot) throw new Error(`robot ${msg.robot} is no longer configured`);
  const target = robotTarget(msg.robot, robot);
  const gate = await deps.pauses.gate(channelKey(target.channel), target.configHash);
  if (gate.state === 'paused') return waitOutPause({ ...c, target }, gate);
  const a: RobotAttempt = {
    ...c,
    robot,
    target,
    gate,
    log: ctx.log,
    startedAtMs: ctx.startedAtMs,
    claim: ctx.claim,
  };
  // A robot has no duplicate check: a message whose earlier attempt may have reached WeCom is never sent again.
  if (msg.inDoubt) return outcomeUnknown(a);

  const request = segmentRequest(msg);
  const upload = uploadOf(request);
  let content = request.content;
  if (upload) {
    try {
      const media = await deps.robotMedia.mediaIdFor(robot.key, upload);
      if (media.uploaded) deps.metrics.count('RobotUploads', 1, dimensionsOf(target.channel));
      content = { media_id: media.mediaId };
    } catch (error) {
      // An upload delivers nothing to the group: it is never in doubt.
      return handleSendError(a, { error, inDoubt: false });
    }
  }

  let decision: QuotaDecision;
  try {
    decision = await deps.quota.acquire(robotDemand(msg, robot));
  } catch (error) {
    return handleSendError(a, { error, inDoubt: false });
  }
  if (decision.kind !== 'send') {
    await probeInconclusive(a);
    return refused(a, decision);
  }
  if (!(await claimToSend(a))) {
    // Canceled, or another copy sends it: nothing goes to the group.
    await deps.quota.report(decision, 'not-sent');
    await probeInconclusive(a);
    a.log.info('not sent: the message was canceled, or another copy holds the claim to send');
    return 'ack';
  }
  try {
    await deps.robots.send(robot.key, { msgtype: request.msgtype, [request.msgtype]: content });
  } catch (error) {
    const inDoubt = error instanceof WecomTransportError && error.inDoubt;
    await deps.quota.report(decision, inDoubt ? 'in-doubt' : 'not-sent');
    if (upload && error instanceof WecomApiError && error.errcode === INVALID_MEDIA_ID) {
      // The cached media id is gone at WeCom: upload again on the retry.
      await deps.robotMedia.forget(robot.key, upload, String(content.media_id)).catch(() => undefined);
      await probeInconclusive(a);
      return scheduleRetry(a, { error, inDoubt: false });
    }
    return handleSendError(a, { error, inDoubt });
  }
  await deps.quota.report(decision, 'sent');
  return delivered(a, ctx);
}

/** WeCom took the message: a probe ends the robot's pause; then it is recorded, or its next part queued. */
async function delivered(a: RobotAttempt, ctx: RobotContext): Promise<Outcome> {
  const { deps, incoming: r, msg, gate, log } = a;
  if (gate.state === 'probe') {
    log.info('probe went through: the robot is no longer paused', { kind: gate.pause.kind });
    await deps.pauses
      .probeSucceeded(channelKey(a.target.channel), gate.pause)
      .catch((err: unknown) => log.warn('could not end the pause; it runs out by itself', { err }));
  }
  deps.metrics.count('Sent', 1, dimensionsOf(a.target.channel));
  log.debug('sent by robot', { msgtype: msg.request.msgtype });
  if (hasNextSegment(msg)) return nextSegment(a, { response: NO_MSGID, touser: [] });
  if (r.receiveCount === 1 && isFirstCopy(msg) && !msg.part && !ctx.stored) {
    ctx.firstDeliveries.push({ record: msg, response: NO_MSGID, incoming: r });
    return 'ack';
  }
  return recordSent(a, NO_MSGID);
}
