export {
  type MessageError,
  type MessageEvent,
  type MessageRecord,
  type MessageStatus,
  type QueuedMessage,
  STATUS,
  TERMINAL_STATUSES,
  toQueuedMessage,
  type WecomReceipt,
} from './record.js';
