import type { GatewayConfig } from '#lib/config/index.js';
import { statusNotice } from '#lib/model/index.js';
import type { Logger, Metrics } from '#lib/observability/index.js';
import type { NotifyQueue } from '#lib/queue/index.js';
import type { StatusListener } from '#lib/store/index.js';
import { webhookTarget } from './targets.js';

/**
 * The status listener (lib/store `StatusListener`) that queues a `message.<status>` webhook job whenever the store
 * writes sent, failed, dead, expired or recalled for a message that has a webhook target. The one place lifecycle
 * outcomes turn into webhooks: the sender and recall write their statuses as always and know nothing of it.
 *
 * A failed enqueue is logged and counted (`WebhookEnqueueFailed`, alarmed) but does not undo or fail the status
 * write: the status is the truth a client can always read back; the webhook is its notification.
 *
 * @example new DynamoMessageStore(db, table, Date.now, notifyOnStatus({ config, queue, logger, metrics }))
 */
export function notifyOnStatus(deps: {
  config: GatewayConfig;
  queue: NotifyQueue;
  logger: Logger;
  metrics: Metrics;
}): StatusListener {
  return async (record, transition) => {
    const job = statusNotice(record, transition);
    if (!job || webhookTarget(deps.config, record, `message.${job.status}`) === undefined) return;
    try {
      await deps.queue.enqueue(job);
    } catch (err) {
      deps.metrics.count('WebhookEnqueueFailed');
      deps.logger.error('could not queue the status webhook', {
        err,
        messageId: record.id,
        status: job.status,
      });
    }
  };
}
