export { CARD_TYPE_NAMES, GATEWAY_LIMITS, LIMITS } from './limits.js';
export { ALL_USERS } from './recipients.js';
export type {
  CardType,
  MessageRequest,
  MsgType,
  Priority,
  Recipients,
  SendOptions,
  ValidationIssue,
  ValidationResult,
} from './types.js';
export { MSG_TYPES, validateMessageRequest } from './validate.js';
export { countRecipients, toWecomSendBody } from './wecom-body.js';
