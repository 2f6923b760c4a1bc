export { COUNTER, callsSpec, memberLimits, memberSpec, personTimesSpec } from './counters.js';
export {
  applySlot,
  bestSlot,
  bestSlots,
  blindSlot,
  bucketMsOf,
  bucketOf,
  type CounterSpec,
  type CounterStates,
  cumThrough,
  earliestSlot,
  emptyPool,
  grantedSlot,
  POOLS,
  type Pool,
  type PoolLimits,
  type PoolState,
  planFits,
  type QuotaKey,
  type SlotPlan,
  staleBuckets,
  usedInMinute,
  usedInWindow,
} from './slots.js';
export { type QuotaReader, type QuotaUsage, QuotaUsageReader } from './usage.js';
export { effectiveLimit, type QuotaWindows, WECOM_WINDOWS } from './windows.js';
