export { authenticate, sha256Hex } from './auth.js';
export {
  type Accepted,
  type BatchItemResult,
  canonicalJson,
  getMessage,
  type IngestDeps,
  newMessageId,
  recallMessage,
  submitBatch,
  submitMessage,
} from './service.js';
