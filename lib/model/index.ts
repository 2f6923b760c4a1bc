export {
  decodeQueuedMessage,
  encodeQueuedMessage,
  type QueuedMessage,
  toQueuedMessage,
} from './queue-body.js';
export {
  type FirstDelivery,
  type MessageError,
  type MessageEvent,
  type MessageRecord,
  type MessageStatus,
  mayHaveReachedWecomBefore,
  newRecord,
  PENDING_STATUSES,
  RECEIPT_LISTS,
  type RecordOrigin,
  receiptOf,
  STATUS,
  TERMINAL_STATUSES,
  type WecomReceipt,
} from './record.js';
export {
  applyChange,
  changes,
  type FailedAttempt,
  MAX_LISTED_DEFERRALS,
  MAX_LISTED_RETRIES,
  type StatusChange,
  TRANSITIONS,
  type TransitionName,
  type WithdrawReason,
  withFirstDelivery,
} from './transitions.js';
