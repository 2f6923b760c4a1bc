import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { atExpression, EventBridgeReleaseTimers } from '#lib/queue/eventbridge-release-timers.js';
import { QueueUnavailableError } from '#lib/queue/index.js';
import { releaseTimerTarget } from '#lib/resources/index.js';

const target = releaseTimerTarget('prod', {
  roleArn: 'arn:aws:iam::123456789012:role/scheduler',
  laneArns: {
    high: 'arn:aws:sqs:ap-east-1:123456789012:high',
    normal: 'arn:aws:sqs:ap-east-1:123456789012:normal',
  },
  deadLetterArn: 'arn:aws:sqs:ap-east-1:123456789012:release-dlq',
});

describe('EventBridgeReleaseTimers', () => {
  const scheduler = mockClient(SchedulerClient);
  beforeEach(() => scheduler.reset());
  const timers = () => new EventBridgeReleaseTimers(new SchedulerClient({ region: 'ap-east-1' }), target);

  it('creates a one-time at() schedule in UTC, deleted after it fired, with retries and the DLQ on its SQS target', async () => {
    scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn' });
    await timers().set({ id: 'msg_01JABC', lane: 'normal', atMs: Date.parse('2026-12-07T00:55:00.400Z') });
    expect(scheduler.commandCalls(CreateScheduleCommand)[0]?.args[0].input).toEqual({
      Name: 'msg_01JABC',
      GroupName: 'wecom-gateway-prod',
      ScheduleExpression: 'at(2026-12-07T00:55:00)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: {
        Arn: target.laneArns.normal,
        RoleArn: target.roleArn,
        Input: '{"v":1,"release":{"id":"msg_01JABC"}}',
        RetryPolicy: { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 },
        DeadLetterConfig: { Arn: target.deadLetterArn },
      },
    });
  });

  it('takes a schedule that exists already (a retried accept) as set', async () => {
    scheduler
      .on(CreateScheduleCommand)
      .rejects(new ConflictException({ message: 'exists', Message: 'exists', $metadata: {} }));
    await expect(timers().set({ id: 'msg_1', lane: 'high', atMs: Date.now() })).resolves.toBeUndefined();
  });

  it('removes a schedule, and says false for one that fired or never was', async () => {
    scheduler.on(DeleteScheduleCommand, { Name: 'msg_1' }).resolves({});
    scheduler
      .on(DeleteScheduleCommand, { Name: 'msg_2' })
      .rejects(new ResourceNotFoundException({ message: 'gone', Message: 'gone', $metadata: {} }));
    expect(await timers().clear('msg_1')).toBe(true);
    expect(await timers().clear('msg_2')).toBe(false);
    expect(scheduler.commandCalls(DeleteScheduleCommand)[0]?.args[0].input).toEqual({
      Name: 'msg_1',
      GroupName: 'wecom-gateway-prod',
    });
  });

  it('turns an unavailable scheduler into the port’s QueueUnavailableError', async () => {
    scheduler.on(CreateScheduleCommand).rejects(
      Object.assign(new Error('throttled'), {
        name: 'ThrottlingException',
        $metadata: { httpStatusCode: 429 },
      }),
    );
    await expect(timers().set({ id: 'msg_1', lane: 'high', atMs: Date.now() })).rejects.toBeInstanceOf(
      QueueUnavailableError,
    );
  });

  it('writes at() to the second, in UTC', () => {
    expect(atExpression(Date.parse('2026-03-29T01:30:59.999Z'))).toBe('at(2026-03-29T01:30:59)');
  });
});
