export {
  createWebhookClient,
  type WebhookClient,
  type WebhookClientOptions,
  type WebhookRequest,
} from './client.js';
export { WebhookError, WebhookSecretError, WebhookVerificationError } from './errors.js';
export {
  type MessageSnapshot,
  type MessageStatusEventType,
  messageStatusPayload,
  publicEvent,
  type TerminalStatus,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
  type WebhookPayload,
  webhookIdFor,
  wecomEventPayload,
} from './payloads.js';
export {
  classifyDelivery,
  DEFAULT_WEBHOOK_RETRY,
  type DeliveryVerdict,
  nextRetryDelaySeconds,
  parseRetryAfter,
  type WebhookRetryPolicy,
} from './retry.js';
export {
  generateWebhookSecret,
  parseWebhookSecret,
  signWebhook,
  type VerifyWebhookInput,
  verifyWebhook,
  WEBHOOK_SECRET_PREFIX,
  type WebhookHeaders,
} from './signature.js';
export type { DeliveryResult } from './types.js';
