export { createDocumentClient, type DocClient } from './client.js';
export { StoreError, StoreUnavailableError } from './errors.js';
export {
  type ClaimResult,
  DynamoIdempotencyStore,
  type IdempotencyEntry,
  type IdempotencyStore,
} from './idempotency-store.js';
export { ATTR, epochSeconds, isExpired, keys } from './keys.js';
export { DynamoMessageStore, type MessageStore, recentEvents } from './message-store.js';
export { DynamoPauseStore, type PauseStore } from './pause-store.js';
export {
  DynamoQuotaStore,
  type MemberVerdict,
  type QuotaStore,
  type QuotaUsageListener,
} from './quota-store.js';
export { DynamoTokenStore } from './token-store.js';
