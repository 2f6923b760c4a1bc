import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { AWS_MAX_ATTEMPTS, AWS_REQUEST_HANDLER, isAwsUnavailable, sendOptions } from '#lib/aws/index.js';
import { encodeReleaseNotice } from '#lib/model/index.js';
import type { ReleaseTimerTarget } from '#lib/resources/index.js';
import { QueueUnavailableError } from './errors.js';
import type { ReleaseTimer, ReleaseTimers } from './release-timers.js';

export const createSchedulerClient = (appId: string): SchedulerClient =>
  new SchedulerClient({
    userAgentAppId: appId,
    maxAttempts: AWS_MAX_ATTEMPTS,
    requestHandler: AWS_REQUEST_HANDLER,
  });

/**
 * `at()` takes a UTC wall time to the second without a zone suffix (with ScheduleExpressionTimezone UTC)
 * (https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html#one-time).
 *
 * @example atExpression(Date.parse('2026-12-07T00:55:00Z')) // 'at(2026-12-07T00:55:00)'
 */
export const atExpression = (ms: number): string => `at(${new Date(ms).toISOString().slice(0, 19)})`;

/**
 * Release timers on EventBridge Scheduler: one `at()` schedule per message, named after it, in the stage's group,
 * whose templated SQS target puts a release notice in the message's lane. Retries, the dead-letter queue and the
 * deletion after it fired come from the stack's definition (lib/resources `RELEASE_TIMERS`).
 */
export class EventBridgeReleaseTimers implements ReleaseTimers {
  constructor(
    private readonly client: Pick<SchedulerClient, 'send'>,
    private readonly target: ReleaseTimerTarget,
  ) {}

  async set(timer: ReleaseTimer): Promise<void> {
    const t = this.target;
    await this.send(
      new CreateScheduleCommand({
        Name: timer.id,
        GroupName: t.groupName,
        ScheduleExpression: atExpression(timer.atMs),
        ScheduleExpressionTimezone: 'UTC',
        // The timer fires ahead of the release and the sender waits out the rest (lib/resources `leadSeconds`).
        FlexibleTimeWindow: { Mode: 'OFF' },
        ActionAfterCompletion: t.actionAfterCompletion,
        Target: {
          Arn: t.laneArns[timer.lane],
          RoleArn: t.roleArn,
          Input: encodeReleaseNotice(timer.id),
          RetryPolicy: {
            MaximumEventAgeInSeconds: t.retry.maximumEventAgeSeconds,
            MaximumRetryAttempts: t.retry.maximumRetryAttempts,
          },
          DeadLetterConfig: { Arn: t.deadLetterArn },
        },
      }),
    ).catch((err: unknown) => {
      // A retried accept (same id) finds its own timer.
      if (!(err instanceof ConflictException)) throw err;
    });
  }

  async clear(id: string): Promise<boolean> {
    try {
      await this.send(new DeleteScheduleCommand({ Name: id, GroupName: this.target.groupName }));
      return true;
    } catch (err) {
      if (err instanceof ResourceNotFoundException) return false;
      throw err;
    }
  }

  private send(command: CreateScheduleCommand | DeleteScheduleCommand): Promise<unknown> {
    return (this.client.send as (c: unknown, o: unknown) => Promise<unknown>)(command, sendOptions()).catch(
      (err: unknown) => {
        // The answers set and clear act on come through as they are; anything that means "not now" is the port's.
        const answer = err instanceof ConflictException || err instanceof ResourceNotFoundException;
        throw !answer && isAwsUnavailable(err) ? new QueueUnavailableError({ cause: err }) : err;
      },
    );
  }
}
