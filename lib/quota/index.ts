export {
  type AppCounters,
  appCounters,
  COUNTER,
  callsSpec,
  type Lateness,
  lateBudgetMs,
  latenessOf,
  memberLimits,
  memberSpec,
  personTimesSpec,
} from './counters.js';
export { QuotaGuard, type QuotaGuardOptions } from './guard.js';
export {
  compact as compactHeld,
  earliestHeld,
  fromLegacyHeld,
  type HeldCall,
  type HeldReservations,
  heldDelaySeconds,
  heldFor,
  heldSlots,
  PICKUP_MS,
} from './held.js';
export { ROBOT_MEMBER, robotQuota } from './robots.js';
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
export { type CounterReservation, type PacedSlot, type QuotaStore, TAT_TOLERANCE_MS } from './store.js';
export type {
  NeverDecision,
  QuotaDecision,
  QuotaDemand,
  QuotaRest,
  QuotaScope,
  SendDecision,
  SendOutcome,
  WaitDecision,
} from './types.js';
export { type QuotaReader, type QuotaUsage, QuotaUsageReader } from './usage.js';
export { effectiveLimit, type QuotaWindows, WECOM_WINDOWS } from './windows.js';
