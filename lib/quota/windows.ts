import type { QuotaConfig } from '#lib/config/index.js';
import type { Priority } from '#lib/messages/index.js';

/** Window lengths. WeCom's are a minute, an hour and a day; tests shrink them (here and in the simulator) alike. */
export interface QuotaWindows {
  minuteMs: number;
  hourMs: number;
  dayMs: number;
  /**
   * WeCom's natural day starts at midnight China Standard Time (UTC+8). Every limit is kept in every rolling window
   * of its length, which covers any fixed window wherever it starts, so this offset only serves reports.
   */
  dayOffsetMs: number;
}

export const WECOM_WINDOWS: QuotaWindows = {
  minuteMs: 60_000,
  hourMs: 3_600_000,
  dayMs: 86_400_000,
  dayOffsetMs: 8 * 3_600_000,
};

/**
 * The limit the gateway allows itself: ⌊(1 − safetyMargin) × WeCom's⌋, and for `normal` only its share of that.
 *
 * @example effectiveLimit(30, { ...QUOTA_DEFAULTS }, 'high') // 24
 */
export function effectiveLimit(limit: number, quota: QuotaConfig, priority: Priority): number {
  const full = Math.floor(limit * (1 - quota.safetyMargin));
  return Math.max(1, priority === 'high' ? full : Math.floor(full * quota.normalShare));
}
