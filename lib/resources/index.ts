/**
 * The gateway's AWS resources, defined once. The CDK stack (infra/) and the offline stack (local/)
 * both build from these definitions, so a queue's redrive policy or a batch size cannot drift
 * between what users run locally and what they deploy.
 */

/** Single DynamoDB table. Key design: see `lib/store/keys.ts`. */
export const TABLE = {
  /** Physical name used by the local stack; CDK lets CloudFormation name it. */
  localName: 'wecom-gateway',
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds. DynamoDB TTL deletes lazily (up to days late), so reads must also treat expired items as absent. */
  ttlAttribute: 'expiresAt',
  /**
   * Sparse global secondary index over template-card records (only they carry `taskKey` = `<app>#<task_id>`), keys
   * only: a card callback's TaskId finds its message with one Query. Eventually consistent, which is plenty — a
   * card is clicked by a person, long after it was sent.
   */
  taskIndex: { name: 'byTask', partitionKey: 'taskKey', sortKey: 'createdAt', projection: 'keys' },
  /**
   * Sparse global secondary index over received WeCom events (only their items carry `feedKey` =
   * `EVENTS#<app>#<month>` and `feedSort` = `<received at>#<event id>`), all attributes: an app's events in the
   * order they arrived, for `GET /v1/events`. The event item itself is the callback's dedupe claim, so storing a
   * callback is one conditional write; the index orders it at no extra request.
   */
  feedIndex: { name: 'byFeed', partitionKey: 'feedKey', sortKey: 'feedSort', projection: 'all' },
} as const;

/** The table's global secondary indexes. */
export const TABLE_INDEXES = [TABLE.taskIndex, TABLE.feedIndex] as const;
export type IndexName = (typeof TABLE_INDEXES)[number]['name'];

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

/** Lambda function sizing shared by CDK and the local runner. */
export interface FunctionDefinition {
  readonly id: string;
  /** Handler file, relative to the repository root; it exports `handler`. */
  readonly entry: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
}

export const FUNCTIONS = {
  ingest: { id: 'ingest', entry: 'functions/ingest/handler.ts', memoryMb: 512, timeoutSeconds: 10 },
  sender: { id: 'sender', entry: 'functions/sender/handler.ts', memoryMb: 512, timeoutSeconds: 30 },
  // WeCom waits 5 s for the answer, then retries (path/90238): a slower answer is worthless.
  callback: { id: 'callback', entry: 'functions/callback/handler.ts', memoryMb: 512, timeoutSeconds: 5 },
  // Up to 10 webhooks in parallel, each bounded to 20 s by the webhook client (lib/webhooks).
  notify: { id: 'notify', entry: 'functions/notify/handler.ts', memoryMb: 256, timeoutSeconds: 60 },
} as const satisfies Record<string, FunctionDefinition>;

export type FunctionId = keyof typeof FUNCTIONS;

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
  'notify-dlq': {
    id: 'notify-dlq',
    visibilityTimeoutSeconds: 30,
    retentionSeconds: DLQ_RETENTION_SECONDS,
    maximumMessageBytes: QUEUE_MAX_MESSAGE_BYTES,
  },
} as const satisfies Record<string, QueueDefinition>;

export type QueueId = keyof typeof QUEUES;

/**
 * The deployed stack's CloudFormation outputs that name its table and queues, for the operator CLI
 * (`wecom-gateway apps status`, `dlq`): `TableName`, `QueueUrlHigh`, `QueueUrlHighDlq`…
 */
export const STACK_OUTPUTS = {
  tableName: 'TableName',
  queueUrl: (id: QueueId): string =>
    `QueueUrl${id
      .split('-')
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join('')}`,
} as const;

/** The lanes that have a dead-letter queue, and its id. */
export const deadLetterQueueOf = (lane: LaneName): QueueId => QUEUES[lane].deadLetter.queueId;

/** Physical queue name used by the local stack (CDK lets CloudFormation name queues). */
export const localQueueName = (id: QueueId): string => `wecom-gateway-${id}`;

/** Sender event source mapping settings, per lane. */
export interface EventSourceDefinition {
  readonly queueId: LaneName;
  readonly functionId: 'sender';
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  /** Lambda's SQS maxConcurrency (min 2). */
  readonly maxConcurrency: number;
}

/**
 * The notify function's event source: at most 5 invocations of 10 webhooks at once, a bound on the load the
 * gateway puts on the businesses' receivers (and on its own outbound connections).
 */
export const NOTIFY_EVENT_SOURCE = {
  queueId: 'notify',
  functionId: 'notify',
  batchSize: 10,
  maxBatchingWindowSeconds: 0,
  maxConcurrency: 5,
} as const;

/** Default reserved concurrency of the sender: the bound on parallel pressure on WeCom. */
export const DEFAULT_SENDER_CONCURRENCY = 6;

/**
 * Splits the sender's reserved concurrency between the two lanes. The sum of the event sources'
 * maxConcurrency must not exceed reserved concurrency, or Lambda throttles SQS invocations and the
 * throttled receives count toward maxReceiveCount. High gets a third (at least 2, Lambda's minimum);
 * it carries alerts, which are few but must not wait behind the normal backlog.
 */
export function senderEventSources(
  reservedConcurrency = DEFAULT_SENDER_CONCURRENCY,
): EventSourceDefinition[] {
  if (!Number.isInteger(reservedConcurrency) || reservedConcurrency < 4) {
    throw new RangeError(
      `sender concurrency must be an integer >= 4 (2 per lane, Lambda's minimum), got ${reservedConcurrency}`,
    );
  }
  const high = Math.max(2, Math.floor(reservedConcurrency / 3));
  const common = { functionId: 'sender', batchSize: 10, maxBatchingWindowSeconds: 0 } as const;
  return [
    { ...common, queueId: 'high', maxConcurrency: high },
    { ...common, queueId: 'normal', maxConcurrency: reservedConcurrency - high },
  ];
}

/** Names of the environment variables the functions read (all read in lib/config/env.ts). */
export const ENV = {
  tableName: 'TABLE_NAME',
  queueUrlHigh: 'QUEUE_URL_HIGH',
  queueUrlNormal: 'QUEUE_URL_NORMAL',
  /** The notify queue (webhook jobs) and its DLQ (jobs whose retries ran out). */
  notifyQueueUrl: 'NOTIFY_QUEUE_URL',
  notifyDlqUrl: 'NOTIFY_DLQ_URL',
  /** Secrets Manager secret (name or ARN) holding the config JSON, in AWS. */
  configSecretId: 'CONFIG_SECRET_ID',
  /** Path of the config JSON file, locally. */
  configFile: 'GATEWAY_CONFIG',
  wecomApiBase: 'WECOM_API_BASE',
  logLevel: 'LOG_LEVEL',
  /** The deployment stage (`dev`, `prod`…; `local` offline): the functions' metric namespace. */
  stage: 'GATEWAY_STAGE',
} as const;

export const DEFAULT_WECOM_API_BASE = 'https://qyapi.weixin.qq.com';

export {
  callsWecom,
  FUNCTION_ACCESS,
  type LaneAction,
  type NotifyQueueAction,
  type TableAction,
  type WecomCall,
} from './access.js';
export {
  DEFAULT_ROUTE,
  dedicatedHookName,
  dedicatedHookRoute,
  hookNameOf,
  ROUTES,
  type Route,
  type RouteDefinition,
  routeKey,
  routeOf,
} from './routes.js';
