// The undici transport lives in './undici.js' and is imported from there only by the sender: re-exporting it here
// would pull undici into every bundle that imports this index.
export {
  type ContactsApiName,
  readAnswer,
  type SendResponse,
  type TokenResponse,
  type WecomApi,
  WecomClient,
} from './client.js';
export { type BroadcastTarget, type Reach, resolveTarget, targetName } from './contacts.js';
export {
  BroadcastDirectory,
  type BroadcastDirectoryOptions,
  type DirectoryStore,
  DirectoryUnavailableError,
  type StoredReach,
} from './directory.js';
export {
  CONFIG_ERRCODES,
  classifyErrcode,
  type ErrcodeClass,
  errcodeHint,
  RATE_LIMITED_ERRCODES,
  RETRYABLE_ERRCODES,
  ROBOT_CONFIG_ERRCODES,
  TOKEN_ERRCODES,
} from './errcodes.js';
export { TokenUnavailableError, WecomApiError, WecomError, WecomTransportError } from './errors.js';
export { createFetchTransport, createFetchWecomClient } from './fetch.js';
export {
  multipartMedia,
  type RobotApi,
  RobotClient,
  type RobotMedia,
  type RobotUpload,
} from './robot-client.js';
export {
  MEDIA_LIFETIME_MS,
  MEDIA_REUSE_MARGIN_MS,
  type MediaKey,
  type MediaStore,
  mediaKeyOf,
  RobotMediaCache,
  type RobotMediaOptions,
  robotFingerprint,
  type StoredMedia,
} from './robot-media.js';
export {
  type StoredToken,
  type TokenApp,
  TokenCache,
  type TokenCacheOptions,
  type TokenDescription,
  type TokenItem,
  type TokenStore,
} from './token-cache.js';
export {
  DEFAULT_TOKEN_BACKOFF,
  secretFingerprint,
  type TokenBackoff,
  type TokenFailure,
} from './token-failure.js';
export { type HttpTransport, NOT_SENT_CODES, splitBaseUrl } from './transport.js';
export {
  parseVisibleRange,
  type RangeCoverage,
  type RecipientIds,
  ROOT_PARTY,
  rangeCoverage,
  type VisibleRange,
  VisibleRangeCache,
  type VisibleRangeCacheOptions,
} from './visible-range.js';
