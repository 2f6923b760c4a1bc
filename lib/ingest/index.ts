export { authorizeApp, authorizeChannel, mayUse, requireScope } from './access.js';
export { type AppState, type AppStateView, getAppState, listApps, type PauseView } from './apps.js';
export { type Authenticator, authenticate, createAuthenticator, sha256Hex } from './auth.js';
export { cancelMessage } from './cancel.js';
export { updateCard } from './card.js';
export {
  AccessDeniedError,
  AppNotFoundError,
  IngestError,
  type IngestErrorCode,
  InvalidRequestError,
  MessageNotFoundError,
  MessageTooLargeError,
  RetryLaterError,
  RobotNotFoundError,
  StateConflictError,
  UnauthenticatedError,
} from './errors.js';
export { type EventView, listEvents } from './events.js';
export { type HookReceipt, type PushReceipt, receiveHook, receivePush } from './hooks.js';
export { canonicalJson } from './idempotency.js';
export { newMessageId } from './ids.js';
export { listMessages, type MessageListView, type MessageSummaryView, toSummaryView } from './list.js';
export { decodeListCursor, encodeListCursor, filtersFingerprint } from './list-cursor.js';
export {
  DEFAULT_LIST_LIMIT,
  type ListFilters,
  type ListRequest,
  MAX_LIST_LIMIT,
  parseListQuery,
  parseRfc3339,
} from './list-query.js';
export { checkReach, MAX_REACH_IDS, parseReachQuery, type ReachView } from './reach.js';
export { recallMessage } from './recall.js';
export { getRobotState, listRobots, type RobotStateView } from './robots.js';
export { QUIET_HOURS_BYPASS } from './schedule.js';
export { MAX_BATCH_ITEMS, submitBatch, submitMessage } from './service.js';
export { getMessage, type MessageStatusView, type WebhookAttemptView } from './status.js';
export { listTemplates, type TemplateView } from './templates.js';
export type {
  Accepted,
  BatchItemResult,
  IngestDeps,
  Principal,
  QuotaUsageReader,
  QuotaWindowUsage,
} from './types.js';
export {
  type DeliveriesView,
  type DeliveryAttemptView,
  type DeliveryStatus,
  type DeliveryView,
  listWebhookDeliveries,
  MAX_WEBHOOK_ATTEMPTS,
  toDeliveries,
} from './webhooks.js';
