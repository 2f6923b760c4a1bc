import { FUNCTIONS } from './functions.js';

/** The priority lanes (one SQS queue each): a message's `priority` names the lane it travels in. */
export const LANES = ['high', 'normal'] as const;
export type LaneName = (typeof LANES)[number];

export interface QueueDefinition {
  /** Construct id in CDK and suffix of the physical name locally. */
  readonly id: string;
  readonly visibilityTimeoutSeconds: number;
  readonly retentionSeconds: number;
  /** SQS MaximumMessageSize: the largest body the queue takes (ingest answers 413 for a message that would not fit). */
  readonly maximumMessageBytes: number;
  /** Where messages go after `maxReceiveCount` receives. Undefined for the DLQs themselves. */
  readonly deadLetter?: { readonly queueId: string; readonly maxReceiveCount: number };
}

/**
 * Receives before a message moves to its DLQ. Only real failures count: quota deferrals re-enqueue a
 * fresh copy (see lib/sender), so a long wait for quota never pushes a message toward the DLQ.
 */
export const MAX_RECEIVE_COUNT = 6;

/**
 * Receives of a notify job before SQS moves it to the notify DLQ. Each receive is one webhook attempt, and the
 * notify function itself moves a job whose retries ran out (lib/webhooks `DEFAULT_WEBHOOK_RETRY.maxAttempts`, 100)
 * to the DLQ and marks the message `webhook_status: dead`; this redrive is only the safety net for a job that keeps
 * crashing the function, so it must lie above the attempts (a unit test holds it there).
 */
export const NOTIFY_MAX_RECEIVE_COUNT = 110;

/**
 * AWS recommends a source queue visibility timeout of at least six times the function timeout
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html).
 */
const LANE_VISIBILITY_SECONDS = 6 * FUNCTIONS.sender.timeoutSeconds;
const DAY = 24 * 3600;
/**
 * A lane message lives at most a few days: deferrals and late retries re-enqueue a fresh copy (its clock restarts),
 * and a message ends by its delivery budget (`delivery.budgetSeconds`, 24 h by default) or, if the sender crashes on
 * it, in the DLQ after `MAX_RECEIVE_COUNT` receives.
 */
const LANE_RETENTION_SECONDS = 7 * DAY;
/**
 * SQS keeps a standard-queue message's original enqueue time when it moves to the DLQ, and expires it by that
 * time; AWS's best practice is a DLQ retention longer than the source queue's
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html).
 * 14 days (SQS's maximum) leaves a dead message at least 7 days in its DLQ.
 */
const DLQ_RETENTION_SECONDS = 14 * DAY;

/**
 * Pinned to SQS's long-standing default, 256 KiB, rather than left to the emulator (fauxqs: 1 MiB) or raised to
 * SQS's newer 1 MiB maximum: ten such bodies in one Lambda event stay far below Lambda's 6 MB invocation payload,
 * and a message's DynamoDB record (400 KB per item) always has room for its events and receipt.
 */
export const QUEUE_MAX_MESSAGE_BYTES = 262_144;

export const QUEUES = {
  high: {
    id: 'high',
    visibilityTimeoutSeconds: LANE_VISIBILITY_SECONDS,
    retentionSeconds: LANE_RETENTION_SECONDS,
    maximumMessageBytes: QUEUE_MAX_MESSAGE_BYTES,
    deadLetter: { queueId: 'high-dlq', maxReceiveCount: MAX_RECEIVE_COUNT },
  },
  normal: {
    id: 'normal',
    visibilityTimeoutSeconds: LANE_VISIBILITY_SECONDS,
    retentionSeconds: LANE_RETENTION_SECONDS,
    maximumMessageBytes: QUEUE_MAX_MESSAGE_BYTES,
    deadLetter: { queueId: 'normal-dlq', maxReceiveCount: MAX_RECEIVE_COUNT },
  },
  'high-dlq': {
    id: 'high-dlq',
    visibilityTimeoutSeconds: 30,
    retentionSeconds: DLQ_RETENTION_SECONDS,
    maximumMessageBytes: QUEUE_MAX_MESSAGE_BYTES,
  },
  'normal-dlq': {
    id: 'normal-dlq',
    visibilityTimeoutSeconds: 30,
    retentionSeconds: DLQ_RETENTION_SECONDS,
    maximumMessageBytes: QUEUE_MAX_MESSAGE_BYTES,
  },
  notify: {
    id: 'notify',
    visibilityTimeoutSeconds: 6 * FUNCTIONS.notify.timeoutSeconds,
    // Retries last ≥ 24 h (lib/webhooks DEFAULT_WEBHOOK_RETRY); four days leave room for an outage of notify itself.
    retentionSeconds: 4 * 24 * 3600,
    maximumMessageBytes: QUEUE_MAX_MESSAGE_BYTES,
    deadLetter: { queueId: 'notify-dlq', maxReceiveCount: NOTIFY_MAX_RECEIVE_COUNT },
  },
  /** Release notices EventBridge Scheduler could not put in a lane within a day of retries (lib/resources release-timers.ts). */
  'release-dlq': {
    id: 'release-dlq',
    visibilityTimeoutSeconds: 30,
    retentionSeconds: DLQ_RETENTION_SECONDS,
    maximumMessageBytes: QUEUE_MAX_MESSAGE_BYTES,
  },
  'notify-dlq': {
    id: 'notify-dlq',
    visibilityTimeoutSeconds: 30,
    retentionSeconds: DLQ_RETENTION_SECONDS,
    maximumMessageBytes: QUEUE_MAX_MESSAGE_BYTES,
  },
} as const satisfies Record<string, QueueDefinition>;

export type QueueId = keyof typeof QUEUES;

/** The lanes that have a dead-letter queue, and its id. */
export const deadLetterQueueOf = (lane: LaneName): QueueId => QUEUES[lane].deadLetter.queueId;

/** Physical queue name used by the local stack (CDK lets CloudFormation name queues). */
export const localQueueName = (id: QueueId): string => `wecom-gateway-${id}`;
