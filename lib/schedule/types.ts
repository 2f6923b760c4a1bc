/** Why a message waits for a time: the client's `send_at`, or its app's quiet hours. */
export type ScheduleReason = 'send_at' | 'quiet_hours';

/**
 * When a scheduled message is due and when it is released to its lane. `dueAt` is the time asked for (`send_at`) or
 * the end of the quiet hours that hold it; `releaseAt` is `dueAt` plus the message's share of the spread, so that
 * many messages due at one instant do not reach the sender (and WeCom) at once. Both ISO times in UTC.
 */
export interface Schedule {
  dueAt: string;
  releaseAt: string;
  reason: ScheduleReason;
}
