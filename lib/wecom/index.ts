export {
  type SendResponse,
  type TokenResponse,
  type WecomApi,
  WecomClient,
  type WecomClientOptions,
} from './client.js';
export {
  CONFIG_ERRCODES,
  classifyErrcode,
  type ErrcodeClass,
  errcodeHint,
  RATE_LIMITED_ERRCODES,
  RETRYABLE_ERRCODES,
  TOKEN_ERRCODES,
} from './errcodes.js';
export { WecomApiError, WecomError, WecomTransportError } from './errors.js';
