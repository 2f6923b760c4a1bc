import type { LaneName } from './queues.js';

/**
 * The one-time timers that release a scheduled message due more than 15 minutes ahead (SQS's longest delay):
 * EventBridge Scheduler `at()` schedules in AWS, the local stack's emulation offline (local/release-timers.ts), both
 * built from this definition. A timer fires {@link RELEASE_TIMERS} `leadSeconds` before the release and puts a small
 * release notice in the message's lane; the sender then queues the message's copy with the exact SQS delay left, so
 * the scheduler's minute precision never makes a message early (docs/scheduling.md).
 */
export const RELEASE_TIMERS = {
  /** The schedule group's name is this plus the stage (`wecom-gateway-prod`): one group per stage. */
  groupPrefix: 'wecom-gateway-',
  /**
   * How long before its release a timer fires. EventBridge runs an `at()` schedule within a minute of its time
   * (https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html), and retries a target that fails:
   * five minutes leave both inside SQS's 15-minute delay.
   */
  leadSeconds: 300,
  /**
   * Deleted once it has fired (ActionAfterCompletion DELETE), so millions of one-time timers never count against the
   * account's schedule quota (https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-delete.html).
   */
  actionAfterCompletion: 'DELETE',
  /**
   * A failed delivery to the lane is retried for up to a day, then the notice goes to the timers' dead-letter queue
   * (an alarm watches it): maxima of the API (https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html).
   */
  retry: { maximumEventAgeSeconds: 86_400, maximumRetryAttempts: 185 },
  deadLetterQueueId: 'release-dlq',
} as const;

/** What a function that sets release timers is told about them (env `RELEASE_TIMERS`, JSON). */
export interface ReleaseTimerTarget {
  readonly groupName: string;
  /** The role EventBridge Scheduler assumes to send to the lanes (SendMessage on them and the DLQ, nothing else). */
  readonly roleArn: string;
  readonly laneArns: Readonly<Record<LaneName, string>>;
  readonly deadLetterArn: string;
  readonly leadSeconds: number;
  readonly actionAfterCompletion: 'DELETE' | 'NONE';
  readonly retry: { readonly maximumEventAgeSeconds: number; readonly maximumRetryAttempts: number };
}

/** The target settings for a stage, given the ARNs the stack (or the local stack) made. */
export const releaseTimerTarget = (
  stage: string,
  arns: { roleArn: string; laneArns: Record<LaneName, string>; deadLetterArn: string },
): ReleaseTimerTarget => ({
  groupName: `${RELEASE_TIMERS.groupPrefix}${stage}`,
  ...arns,
  leadSeconds: RELEASE_TIMERS.leadSeconds,
  actionAfterCompletion: RELEASE_TIMERS.actionAfterCompletion,
  retry: RELEASE_TIMERS.retry,
});
