import { channelConfig, type GatewayConfig } from '#lib/config/index.js';
import { type Addressed, channelOf } from '#lib/messages/index.js';
import type { RecordFields } from '#lib/model/index.js';
import type { WebhookEventType } from '#lib/webhooks/payloads.js';

/**
 * Where a message's webhooks go: its own `callback_url`, else its app's (or robot's) default `webhook.url`; undefined when
 * neither is set, or when the app filtered this event type out (`webhook.events`).
 *
 * @example webhookTarget(config, record, 'message.sent') // 'https://hooks.example.com/wecom' or undefined
 */
export function webhookTarget(
  config: GatewayConfig,
  record: Addressed & Pick<RecordFields, 'callbackUrl'>,
  type: WebhookEventType,
): string | undefined {
  const hook = channelConfig(config, channelOf(record))?.webhook;
  const target = record.callbackUrl ?? hook?.url;
  if (target === undefined) return undefined;
  // An app without a webhook block wants every event (the filter's default).
  if (hook && !hook.events.includes(type)) return undefined;
  return target;
}
