import { channelConfig, type GatewayConfig } from '#lib/config/index.js';
import { addressOf, channelKey, channelLabel, channelOf } from '#lib/messages/index.js';
import {
  decodeNotifyJob,
  type MessageRecord,
  type NotifyJob,
  WEBHOOK_STATUS,
  type WebhookStatus,
} from '#lib/model/index.js';
import type { Logger, Metrics } from '#lib/observability/index.js';
import type { NotifyQueue } from '#lib/queue/index.js';
import type { MessageStore, WebhookAttempt, WebhookLog } from '#lib/store/index.js';
import {
  classifyDelivery,
  type DeliveryResult,
  type DeliveryVerdict,
  messageStatusPayload,
  nextRetryDelaySeconds,
  signWebhook,
  type WebhookClient,
  type WebhookEventType,
  type WebhookPayload,
  type WebhookRetryPolicy,
  webhookIdFor,
  wecomEventPayload,
} from '#lib/webhooks/index.js';
import { webhookTarget } from './targets.js';

export interface NotifyDeps {
  config: GatewayConfig;
  messages: Pick<MessageStore, 'get'>;
  webhooks: WebhookLog;
  queue: NotifyQueue;
  client: Pick<WebhookClient, 'deliver'>;
  logger: Logger;
  metrics: Metrics;
  /** Default lib/webhooks DEFAULT_WEBHOOK_RETRY (≥ 24 h); tests shorten it. */
  retry?: WebhookRetryPolicy;
  now?: () => number;
  random?: () => number;
}

/** One SQS record of the notify queue (no Lambda types in lib/). */
export interface NotifyRecord {
  sqsMessageId: string;
  receiptHandle: string;
  body: string;
  /** This receive's number: the attempt's number. */
  receiveCount: number;
  /** When the job was queued (SQS SentTimestamp, epoch ms): retries last until it is `maxAgeSeconds` old. */
  sentAtMs: number;
}

/**
 * Sends one webhook per record, in parallel. A record whose webhook must be tried again stays in the queue,
 * invisible for the backoff (ChangeMessageVisibility), and is reported as a batch item failure; everything else —
 * delivered, stopped by the receiver (410), refused by the SSRF guard, dead after ≥ 24 h, or not wanted — is
 * acknowledged.
 *
 * @example const { failures } = await processNotifyBatch(deps, records); // failures: SQS message ids to keep
 */
export async function processNotifyBatch(
  deps: NotifyDeps,
  records: readonly NotifyRecord[],
): Promise<{ failures: string[] }> {
  const outcomes = await Promise.all(
    records.map((r) =>
      processRecord(deps, r).catch((err: unknown) => {
        // Recording failed (DynamoDB or SQS unavailable): SQS delivers the job again after its visibility timeout.
        deps.logger.error('webhook job failed', { err, sqsMessageId: r.sqsMessageId });
        return 'retry' as const;
      }),
    ),
  );
  return { failures: records.filter((_, i) => outcomes[i] === 'retry').map((r) => r.sqsMessageId) };
}

interface Webhook {
  job: NotifyJob;
  record: MessageRecord;
  type: WebhookEventType;
  id: string;
  url: string;
  body: string;
}

async function processRecord(deps: NotifyDeps, r: NotifyRecord): Promise<'ack' | 'retry'> {
  const webhook = await prepare(deps, r);
  if (!webhook) return 'ack';
  const now = deps.now ?? Date.now;
  const at = new Date(now()).toISOString();
  const channel = channelOf(webhook.record);
  const owner = channelConfig(deps.config, channel);
  const secrets = owner?.webhook?.secrets ?? [];
  const base = {
    at,
    webhookId: webhook.id,
    type: webhook.type,
    attempt: r.receiveCount,
    target: redactTarget(webhook.url),
  };
  if (secrets.length === 0) {
    // Never send an unsigned webhook: the receiver could not tell it from a forgery.
    const reason = `refused: ${channelLabel(channel)} has no webhook signing secret (config ${channel.kind}s.${channel.name}.webhook.secrets)`;
    await finish(
      deps,
      webhook,
      { ...base, outcome: 'refused', reason, latencyMs: 0 },
      WEBHOOK_STATUS.refused,
    );
    return 'ack';
  }
  const headers = signWebhook(
    { id: webhook.id, timestamp: Math.floor(now() / 1000), body: webhook.body },
    secrets,
  );
  const result = await deps.client.deliver({
    url: webhook.url,
    headers: { ...headers },
    body: webhook.body,
    ...(owner?.webhook?.allowedPorts.length ? { allowedPorts: owner.webhook.allowedPorts } : {}),
  });
  const verdict = classifyDelivery(result);
  const answered = answerOf(result);
  if (verdict.outcome === 'delivered') {
    deps.metrics.count('WebhooksDelivered');
    await finish(deps, webhook, { ...base, ...answered, outcome: 'delivered' }, WEBHOOK_STATUS.delivered);
    return 'ack';
  }
  if (verdict.outcome === 'stop') {
    const gone = result.kind === 'response';
    if (!gone) deps.metrics.count('WebhooksRefused');
    const attempt: WebhookAttempt = {
      ...base,
      ...answered,
      outcome: gone ? 'gone' : 'refused',
      reason: verdict.reason,
    };
    await finish(deps, webhook, attempt, gone ? WEBHOOK_STATUS.gone : WEBHOOK_STATUS.refused);
    return 'ack';
  }
  return retryOrDie(deps, r, webhook, { ...base, ...answered }, verdict);
}

/** The job's webhook, or undefined when there is none to send (unknown body, message gone, no target). */
async function prepare(deps: NotifyDeps, r: NotifyRecord): Promise<Webhook | undefined> {
  const job = decodeNotifyJob(r.body);
  if (!job) {
    deps.logger.warn('dropped a notify job of unknown shape', { sqsMessageId: r.sqsMessageId });
    return undefined;
  }
  const record = await deps.messages.get(job.messageId);
  if (!record) return undefined; // expired with its retention: nobody can look it up any more
  const type: WebhookEventType = job.kind === 'status' ? `message.${job.status}` : 'wecom.event';
  const url = webhookTarget(deps.config, record, type);
  if (url === undefined) return undefined; // the config changed since the job was queued
  const payload = payloadOf(job, record);
  const id =
    job.kind === 'status'
      ? webhookIdFor(record.id, type)
      : webhookIdFor(channelKey(channelOf(record)), job.eventId);
  return { job, record, type, id, url, body: JSON.stringify(payload) };
}

function payloadOf(job: NotifyJob, record: MessageRecord): WebhookPayload {
  if (job.kind === 'event') {
    return wecomEventPayload({
      app: job.app,
      event: job.event,
      receivedAt: job.receivedAt,
      messageId: record.id,
      ...(record.metadata ? { metadata: record.metadata } : {}),
    });
  }
  // The status this job is about, as of when it was reached (the record may have moved on since).
  const { response_code: _secret, ...wecom } = record.wecom ?? { msgid: '' };
  return messageStatusPayload({
    ...addressOf(channelOf(record)),
    id: record.id,
    status: job.status,
    priority: record.priority,
    attempts: record.attempts,
    createdAt: record.createdAt,
    updatedAt: job.at,
    ...(record.sentAt ? { sentAt: record.sentAt } : {}),
    ...(record.metadata ? { metadata: record.metadata } : {}),
    ...(record.wecom ? { wecom } : {}),
    ...(record.error && job.status !== 'sent' && job.status !== 'recalled'
      ? {
          error: {
            code: record.error.code,
            message: record.error.message,
            ...(record.error.wecom_errcode !== undefined ? { wecomErrcode: record.error.wecom_errcode } : {}),
          },
        }
      : {}),
  });
}

async function retryOrDie(
  deps: NotifyDeps,
  r: NotifyRecord,
  webhook: Webhook,
  base: Omit<WebhookAttempt, 'outcome'>,
  verdict: Extract<DeliveryVerdict, { outcome: 'retry' }>,
): Promise<'ack' | 'retry'> {
  const ageSeconds = Math.max(0, ((deps.now ?? Date.now)() - r.sentAtMs) / 1000);
  const delay = nextRetryDelaySeconds(r.receiveCount, ageSeconds, {
    ...(verdict.retryAfterSeconds !== undefined ? { retryAfterSeconds: verdict.retryAfterSeconds } : {}),
    ...(deps.retry ? { policy: deps.retry } : {}),
    ...(deps.random ? { random: deps.random } : {}),
  });
  if (delay === undefined) {
    deps.metrics.count('WebhooksDead');
    const reason = `${base.reason ?? verdict.reason}; gave up after ${r.receiveCount} attempts over ${Math.round(ageSeconds)} s`;
    await deps.queue.deadLetter(r.body, reason);
    await finish(deps, webhook, { ...base, outcome: 'dead', reason }, WEBHOOK_STATUS.dead);
    deps.logger.warn('webhook dead', { messageId: webhook.record.id, webhookId: webhook.id, reason });
    return 'ack';
  }
  deps.metrics.count('WebhookRetries');
  await deps.webhooks.recordAttempt(
    webhook.record.id,
    { ...base, outcome: 'retry', reason: base.reason ?? verdict.reason, retryInSeconds: delay },
    webhook.record.expiresAt,
  );
  await deps.queue.retryAfter(r.receiptHandle, delay);
  return 'retry';
}

async function finish(
  deps: NotifyDeps,
  webhook: Webhook,
  attempt: WebhookAttempt,
  status: WebhookStatus,
): Promise<void> {
  await Promise.all([
    deps.webhooks.recordAttempt(webhook.record.id, attempt, webhook.record.expiresAt),
    deps.webhooks.setStatus(webhook.record.id, status),
  ]);
}

/** What the receiver answered, for the attempt record: status, latency, excerpt — or why nothing came back. */
function answerOf(
  result: DeliveryResult,
): Pick<WebhookAttempt, 'statusCode' | 'latencyMs' | 'excerpt' | 'reason'> {
  if (result.kind === 'response') {
    return {
      statusCode: result.status,
      latencyMs: result.latencyMs,
      ...(result.excerpt ? { excerpt: result.excerpt } : {}),
    };
  }
  if (result.kind === 'refused') return { latencyMs: result.latencyMs, reason: `refused: ${result.reason}` };
  return { latencyMs: result.latencyMs, reason: `${result.code}: ${result.message}`.slice(0, 256) };
}

/** The target without its query string or fragment, which may carry a token the business put there. */
function redactTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}
