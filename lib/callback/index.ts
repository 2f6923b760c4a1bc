export { parseEncodingAESKey } from './cipher.js';
export { dedupeKey } from './dedupe.js';
export {
  CallbackBodyTooLargeError,
  CallbackCiphertextError,
  CallbackCorpMismatchError,
  CallbackError,
  CallbackRequestError,
  CallbackSignatureError,
  CallbackStaleError,
  CallbackXmlError,
} from './errors.js';
export {
  type AppEvent,
  type CallbackEvent,
  type CallbackEventKind,
  isUserMessage,
  MESSAGE_KINDS,
  type SelectedItem,
  type UnknownEvent,
  type UserMessage,
  type XmlFields,
  type XmlValue,
} from './events.js';
export { parseCallbackMessage } from './parse.js';
export {
  type CallbackCredentials,
  type CallbackQuery,
  type CallbackVerifier,
  type CallbackVerifierOptions,
  createCallbackVerifier,
  extractEncrypt,
} from './verifier.js';
