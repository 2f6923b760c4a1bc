export { DEFAULT_RETRY, fullJitterSeconds, type RetryPolicy } from './backoff.js';
export {
  dayEndOf,
  type Gate,
  nextPause,
  PauseCache,
  type PauseCacheOptions,
  type PauseSchedule,
} from './pause.js';
export { processBatch } from './service.js';
export type { IncomingRecord, SenderDeps } from './types.js';
