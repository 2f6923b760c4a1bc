import { QUOTA_DEFAULTS, type QuotaConfig, type RobotQuotaConfig } from '#lib/config/index.js';

/**
 * A group robot in the quota engine: a key (its channel key, `robot:<name>`) with one member, the robot's group,
 * whose minute is the robot's limit (WeCom: 20 messages a minute per robot). So a robot's messages are paced on that
 * member's line like a member's messages from an app: rolling minute, margin, `high`'s own pool, arrival order.
 */
export const ROBOT_MEMBER = 'group';

/**
 * Hours of a robot's minute the hour log may hold. WeCom sets no hour limit for a robot, so the log must never be
 * the limit: its sustained rate is 60/62 of what it allows (docs/quota.md), and 62 minutes' worth keeps it at the
 * minute's rate.
 */
const HOUR_IN_MINUTES = 62;

/**
 * The quota a robot's sends are reserved under: its minute as the member's, and the app counters (calls, person-times)
 * left at limits its minute can never reach, so they never hold a send back.
 *
 * @example robotQuota({ perMinute: 20, safetyMargin: 0.2, normalShare: 0.8 }).perMemberPerMinute // 20
 */
export function robotQuota(q: RobotQuotaConfig): QuotaConfig {
  return {
    perMinute: QUOTA_DEFAULTS.perMinute,
    perHour: QUOTA_DEFAULTS.perHour,
    perDay: QUOTA_DEFAULTS.perDay,
    perMemberPerMinute: q.perMinute,
    perMemberPerHour: q.perMinute * HOUR_IN_MINUTES,
    safetyMargin: q.safetyMargin,
    normalShare: q.normalShare,
  };
}
