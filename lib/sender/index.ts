export { effectiveLimit, type QuotaWindows, WECOM_WINDOWS } from '#lib/quota/index.js';
export { DEFAULT_RETRY, fullJitterSeconds, type RetryPolicy } from './backoff.js';
export {
  dayEndOf,
  type Gate,
  nextPause,
  PauseCache,
  type PauseCacheOptions,
  type PauseSchedule,
} from './pause.js';
export { QuotaGuard, type QuotaGuardOptions } from './quota.js';
export { BROADCAST_SLOT, type QuotaDecision, type QuotaDemand, type QuotaScope } from './quota-types.js';
export { processBatch } from './service.js';
export type { IncomingRecord, SenderDeps } from './types.js';
