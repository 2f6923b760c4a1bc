import type { ApiKeyConfig, GatewayConfig } from '#lib/config/index.js';
import type { Resolver, UrlGuard } from '#lib/net/index.js';
import type { Logger, Metrics } from '#lib/observability/index.js';
import type { DeadLetterQueue, MessageQueue, QueueDepths, ReleaseTimers } from '#lib/queue/index.js';
import type {
  CardCodeStore,
  EventStore,
  IdempotencyStore,
  MessageList,
  MessageStore,
  PauseStore,
  WebhookLog,
} from '#lib/store/index.js';
import type { TokenCache, VisibleRangeCache, WecomApi } from '#lib/wecom/index.js';

export interface IngestDeps {
  config: GatewayConfig;
  messages: MessageStore;
  /** The message list (`GET /v1/messages`), over the table's list indexes. */
  messageList: MessageList;
  idempotency: IdempotencyStore;
  queue: MessageQueue;
  /**
   * Timers for messages scheduled beyond SQS's longest delay (15 min). Absent (tests of other things): such a message
   * reaches its time in 15-minute hops through its lane instead.
   */
  timers?: ReleaseTimers;
  /**
   * The lanes' dead-letter queues (`/v1/dlq`, scope `admin`); absent where the function was not given their URLs,
   * and then those routes answer 503.
   */
  deadLetters?: DeadLetterQueue;
  /** The lanes' depths, shown to admin keys by GET /v1/apps; absent in tests that do not need them. */
  queueDepths?: QueueDepths;
  logger: Logger;
  metrics: Metrics;
  /** Received WeCom events: a message's own, and an app's feed (`GET /v1/events`). */
  events: Pick<EventStore, 'listByApp' | 'listByMessage'>;
  /** Webhook attempts, for the status and a message's deliveries. */
  webhooks: Pick<WebhookLog, 'listAttempts'>;
  /** A card's response codes, spent by card updates. */
  cards: CardCodeStore;
  /** For recall and card updates, and the token's age in `GET /v1/apps/{app}`. */
  tokens: Pick<TokenCache, 'withToken' | 'describe'>;
  /** The app pauses the senders write (read only, for `GET /v1/apps`). */
  pauses: Pick<PauseStore, 'get'>;
  /** Quota use in the current windows (the sender's quota counters, read only). */
  quotaUsage: QuotaUsageReader;
  wecom: Pick<WecomApi, 'recall' | 'updateTemplateCard'>;
  /** The apps' visible ranges (`agent/get` with their tokens), for `GET /v1/apps/{app}/reach`. */
  visibleRanges: Pick<VisibleRangeCache, 'get'>;
  /** SSRF guard for `callback_url`; default: `resolve`, loopback per `config.allowLoopbackWebhooks`. */
  urlGuard?: UrlGuard;
  /** DNS for the default guard (tests script it); default the system resolver. */
  resolve?: Resolver;
  now?: () => number;
  newId?: () => string;
}

/**
 * Who a message is accepted for: an API key, or a hook or push key acting like one (`hook:<name>`, `push:<name>`).
 * Its name scopes Idempotency-Keys and is stored on the record; `apps` are the apps it may send for.
 */
export type Principal = Pick<ApiKeyConfig, 'name' | 'apps' | 'robots'> &
  Partial<Pick<ApiKeyConfig, 'scopes'>>;

export interface Accepted {
  id: string;
  status: 'queued' | 'scheduled';
  /** A scheduled message: when it is due (its `send_at`, or the end of the quiet hours that hold it). */
  send_at?: string;
  /** A scheduled message: when it is released to be sent (`send_at` plus its share of the spread). */
  release_at?: string;
  /** Long content split on request: how many parts (each a send to every recipient) the message became. */
  parts?: number;
}

/**
 * One item of a batch: queued, or why not — an IngestError, or an unexpected error (logged by ingest; lib/http
 * answers it as a generic internal error).
 */
export type BatchItemResult = ({ index: number } & Accepted) | { index: number; error: unknown };

/** One quota window of an app, as `GET /v1/apps/{app}` shows it. */
export interface QuotaWindowUsage {
  /** `app-minute`, `app-hour`, `app-day`. */
  window: string;
  /** WeCom's limit as configured (`quota.perMinute`…). */
  limit: number;
  /** What the gateway allows itself (the limit less its safety margin), for `high`; `normal` gets its share. */
  allowed: number;
  /** Reserved so far in this window (senders reserve in small blocks ahead of use). */
  used: number;
  /** When the window ends (epoch ms). */
  resetsAtMs: number;
}

/** Port: reads an app's quota counters (lib/sender `QuotaGuard.usage`, wired in lib/runtime). */
export interface QuotaUsageReader {
  usage(app: string, now: number): Promise<QuotaWindowUsage[]>;
  /** A group robot's rolling minute (undefined for a robot no longer configured). */
  robotUsage?(robot: string, now: number): Promise<QuotaWindowUsage | undefined>;
}
