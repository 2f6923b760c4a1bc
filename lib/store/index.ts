export { type CardCodeSource, type CardCodeStore, DynamoCardCodeStore } from './card-store.js';
export { createDocumentClient, type DocClient } from './client.js';
export { DynamoDirectoryStore } from './directory-store.js';
export { StoreError, StoreRejectedError, StoreUnavailableError } from './errors.js';
export {
  DynamoEventStore,
  type EventPage,
  type EventStore,
  InvalidCursorError,
  type RecordOutcome,
  type StoredEvent,
} from './event-store.js';
export {
  type AcceptedSchedule,
  type ClaimResult,
  DynamoIdempotencyStore,
  type IdempotencyEntry,
  type IdempotencyStore,
} from './idempotency-store.js';
export { ATTR, epochSeconds, isExpired, keys } from './keys.js';
export { DynamoMediaStore } from './media-store.js';
export {
  DynamoMessageList,
  type ListPosition,
  MAX_EXAMINED,
  type MessageList,
  type MessageListPage,
  type MessageListQuery,
} from './message-list.js';
export {
  type BatchCreateResult,
  DynamoMessageStore,
  type FirstDeliveryItem,
  type MessageStore,
  recentEvents,
  type StatusListener,
} from './message-store.js';
export { type AppPause, DynamoPauseStore, type PauseStore } from './pause-store.js';
export { DynamoQuotaStore, parseCounters } from './quota-store.js';
export { DynamoTokenStore } from './token-store.js';
export { DynamoWebhookLog, type WebhookAttempt, type WebhookLog } from './webhook-store.js';
