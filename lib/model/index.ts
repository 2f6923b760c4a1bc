export {
  decodeQueuedMessage,
  encodeQueuedMessage,
  type QueuedMessage,
  toQueuedMessage,
} from './queue-body.js';
export {
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
  sentRecord,
  TERMINAL_STATUSES,
  type WecomReceipt,
} from './record.js';
export {
  applyChange,
  changes,
  type FailedAttempt,
  type StatusChange,
  TRANSITIONS,
  type TransitionName,
  type WithdrawReason,
} from './transitions.js';
