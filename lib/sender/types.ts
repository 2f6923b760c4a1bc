import type { AppConfig, GatewayConfig } from '#lib/config/index.js';
import type { AppMessageRequest, Channel, RobotMessageRequest } from '#lib/messages/index.js';
import type { QueuedMessage } from '#lib/model/index.js';
import type { Logger, MetricDimensions, Metrics } from '#lib/observability/index.js';
import type { MessageQueue } from '#lib/queue/index.js';
import type { QuotaGuard, QuotaWindows } from '#lib/quota/index.js';
import type { LaneName } from '#lib/resources/index.js';
import type { MessageStore } from '#lib/store/index.js';
import type {
  BroadcastDirectory,
  RobotApi,
  RobotMediaCache,
  SendResponse,
  TokenCache,
  WecomApi,
} from '#lib/wecom/index.js';
import type { RetryPolicy } from './backoff.js';
import type { Gate, PauseCache } from './pause.js';

/** One SQS record, as the sender sees it (no Lambda types in lib/). */
export interface IncomingRecord {
  /** SQS message id: what `batchItemFailures` names. */
  sqsMessageId: string;
  receiptHandle: string;
  body: string;
  receiveCount: number;
  lane: LaneName;
  /** SQS ApproximateFirstReceiveTimestamp (epoch ms): when the first attempt of this copy began, at the earliest. */
  firstReceivedAtMs?: number;
}

export interface SenderDeps {
  config: GatewayConfig;
  messages: MessageStore;
  queue: MessageQueue;
  tokens: TokenCache;
  quota: QuotaGuard;
  pauses: PauseCache;
  wecom: Pick<WecomApi, 'send'>;
  /** Group robots' webhook API (`webhook/send`, `upload_media`). */
  robots: Pick<RobotApi, 'send'>;
  /** Media ids of robots' uploads, reused while WeCom keeps them. */
  robotMedia: Pick<RobotMediaCache, 'mediaIdFor' | 'forget'>;
  logger: Logger;
  metrics: Metrics;
  maxReceiveCount: number;
  retry?: RetryPolicy;
  /**
   * Spreads deferrals that hold no quota slot (a paused app, the app's own windows full) over this many seconds past
   * their wake time (default 10). Deferrals that hold slots wake for them exactly.
   */
  deferJitterSeconds?: number;
  /** Resolves parties, tags and `@all` through WeCom's contacts API; without it they are sized from configuration. */
  broadcasts?: BroadcastDirectory;
  /** The first pause after 45009 (a minute window: 60 s); later ones of a run grow from it (pause.ts). */
  rateLimitPauseMs?: number;
  /** Waits before each probe of an app whose WeCom configuration is wrong (default 1, 2, 5, 10, 15 min). */
  configProbeMs?: readonly number[];
  /** WeCom's windows: where its day ends (the longest 45009 pause). Default WECOM_WINDOWS. */
  windows?: QuotaWindows;
  now?: () => number;
  random?: () => number;
  /** Waits in-process (a scheduled copy a moment early); tests on a fake clock replace it. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * A received copy of a message: what every outcome (defer, retry, fail) starts from. `msg` carries `inDoubt` when an
 * earlier attempt may have reached WeCom.
 */
export interface Received {
  deps: SenderDeps;
  /** The SQS record the copy came in. */
  incoming: IncomingRecord;
  msg: QueuedMessage;
}

/** A copy of an app's message (`message/send`). */
export type AppQueuedMessage = Extract<QueuedMessage, { app: string }> & { request: AppMessageRequest };
/** A copy of a group robot's message (`webhook/send`). */
export type RobotQueuedMessage = Extract<QueuedMessage, { robot: string }> & { request: RobotMessageRequest };

/** Whether a copy is a group robot's message (its body names `robot`, and so does its request). */
export const isRobotCopy = (msg: QueuedMessage): msg is RobotQueuedMessage =>
  msg.robot !== undefined && msg.request.robot !== undefined;

/** Whether a copy is an app's message. */
export const isAppCopy = (msg: QueuedMessage): msg is AppQueuedMessage =>
  msg.app !== undefined && msg.request.robot === undefined;

/** The series a channel's counts also go to: the app's, or the robot's. */
export const dimensionsOf = (c: Channel): MetricDimensions =>
  c.kind === 'robot' ? { robot: c.name } : { app: c.name };

/**
 * What the pause policy (pause-policy.ts) needs of the channel an attempt goes through: under which name its pause
 * is kept (lib/messages `channelKey`), a fingerprint of what the operator can change to fix a configuration error
 * (never the secret itself), and how long its messages wait for that fix.
 */
export interface PauseTarget {
  channel: Channel;
  configHash: string;
  configErrorWaitMs: number;
}

/** One attempt to deliver a received copy through its channel, built once its pause is known. */
export interface ChannelAttempt extends Received {
  target: PauseTarget;
  /** Send, or send as the probe of a paused app (robot). */
  gate: Gate;
  /** The log with the message's id, channel and receive count. */
  log: Logger;
  /** When the attempt started (epoch ms). */
  startedAtMs: number;
  /** Whether this copy holds the claim to send on its record (service.ts `claimToSend`); set once it does. */
  claim: { held: boolean };
}

/** An attempt of an app's message: built once in `processRecord`, when its app's pause is known. */
export interface Attempt extends ChannelAttempt {
  msg: AppQueuedMessage;
  app: AppConfig;
}

/** How an attempt failed: the error, and whether the attempt is in doubt (it may have reached WeCom). */
export interface AttemptFailure {
  error: unknown;
  /** True only when `message/send` itself was called and its answer is missing. */
  inDoubt: boolean;
}

/** What became of one record: acknowledged (deleted from the queue) or left for a retry. */
export type Outcome = 'ack' | 'retry';

export interface Sent {
  record: QueuedMessage;
  response: SendResponse;
  /** The SQS record it came in: retried as it is if recording `sent` fails. */
  incoming: IncomingRecord;
}

/** The sender's clock (a test may set `deps.now`). */
export const nowOf = (deps: SenderDeps): number => (deps.now ?? Date.now)();

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
