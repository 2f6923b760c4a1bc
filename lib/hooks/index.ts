export { createHookFinder, type HookFinder } from './auth.js';
export { HookError, type HookErrorCode, HookPayloadError, HookSignatureError } from './errors.js';
export {
  type Notice,
  type NoticeField,
  type NoticeLink,
  type RenderedMessage,
  renderNotice,
  type Tone,
} from './notice.js';
export {
  createPushKeyMatcher,
  type PushParams,
  type PushRequest,
  parsePushParams,
  pushToMessage,
} from './push.js';
export { type RouteDecision, routeDelivery, ruleMatches, valueAt } from './routing.js';
export { ADAPTERS, handleHook, hookIdempotencyKey } from './run.js';
export type { HookInput, HookMessage, HookOutcome, HookSourceAdapter, SourceResult } from './types.js';
