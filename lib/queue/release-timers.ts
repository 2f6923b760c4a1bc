import type { LaneName } from '#lib/resources/index.js';

/** One timer: at `atMs`, a release notice for message `id` goes to `lane`. */
export interface ReleaseTimer {
  id: string;
  lane: LaneName;
  atMs: number;
}

/**
 * Port: one-time timers for scheduled messages due beyond SQS's longest delay (docs/scheduling.md). EventBridge
 * Scheduler in AWS (eventbridge-release-timers.ts); the local stack emulates it (local/release-timers.ts).
 */
export interface ReleaseTimers {
  /** Sets a timer named after the message; setting one that exists already (a retried accept) changes nothing. */
  set(timer: ReleaseTimer): Promise<void>;
  /** Removes the message's timer; false when there was none (it fired, or was never set). */
  clear(id: string): Promise<boolean>;
}
