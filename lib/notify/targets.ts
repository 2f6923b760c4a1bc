import type { GatewayConfig } from '#lib/config/index.js';
import type { MessageRecord } from '#lib/model/index.js';
import type { WebhookEventType } from '#lib/webhooks/payloads.js';

/**
 * Where a message's webhooks go: its own `callback_url`, else its app's default `webhook.url`; undefined when
 * neither is set, or when the app filtered this event type out (`webhook.events`).
 *
 * @example webhookTarget(config, record, 'message.sent') // 'https://hooks.example.com/wecom' or undefined
 */
export function webhookTarget(
  config: GatewayConfig,
  record: Pick<MessageRecord, 'app' | 'callbackUrl'>,
  type: WebhookEventType,
): string | undefined {
  const hook = config.apps[record.app]?.webhook;
  const target = record.callbackUrl ?? hook?.url;
  if (target === undefined) return undefined;
  // An app without a webhook block wants every event (the filter's default).
  if (hook && !hook.events.includes(type)) return undefined;
  return target;
}
