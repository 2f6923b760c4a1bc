import type { GatewayConfig } from '#lib/config/index.js';
import type { UrlGuard } from '#lib/net/index.js';
import type { Logger, Metrics } from '#lib/observability/index.js';
import type { MessageQueue } from '#lib/queue/index.js';
import type { IdempotencyStore, MessageStore } from '#lib/store/index.js';
import type { TokenCache, WecomApi } from '#lib/wecom/index.js';

export interface IngestDeps {
  config: GatewayConfig;
  messages: MessageStore;
  idempotency: IdempotencyStore;
  queue: MessageQueue;
  logger: Logger;
  metrics: Metrics;
  /** For recall only. */
  tokens: TokenCache;
  wecom: Pick<WecomApi, 'recall'>;
  /** SSRF guard for `callback_url`; default: the system resolver, loopback per `config.allowLoopbackWebhooks`. */
  urlGuard?: UrlGuard;
  now?: () => number;
  newId?: () => string;
}

export interface Accepted {
  id: string;
  status: 'queued';
}

/**
 * One item of a batch: queued, or why not — an IngestError, or an unexpected error (logged by ingest; lib/http
 * answers it as a generic internal error).
 */
export type BatchItemResult =
  | { index: number; id: string; status: 'queued' }
  | { index: number; error: unknown };
