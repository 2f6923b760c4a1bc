export { type Authenticator, authenticate, createAuthenticator, sha256Hex } from './auth.js';
export {
  type Accepted,
  type BatchItemResult,
  canonicalJson,
  getMessage,
  type IngestDeps,
  MAX_BATCH_ITEMS,
  type MessageStatusView,
  newMessageId,
  recallMessage,
  requireScope,
  submitBatch,
  submitMessage,
} from './service.js';
