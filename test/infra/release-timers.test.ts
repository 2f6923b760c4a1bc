import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV, RELEASE_TIMERS } from '#lib/resources/index.js';
import {
  actionsOf,
  logicalId,
  resourcesOf,
  roleLogicalId,
  SYNTH_TIMEOUT_MS,
  type SynthesizedGateway,
  statementsOfRole,
  synthGateway,
} from './synth.js';

/**
 * The release timers of scheduled messages (docs/scheduling.md): the schedules are made at run time by ingest, so
 * what the template can promise is their group, the role EventBridge Scheduler assumes, the dead-letter queue, and
 * the settings every schedule is created with (ingest's `RELEASE_TIMERS`), which lib/queue applies as they are.
 */
describe('release timers', () => {
  let gateway: SynthesizedGateway;
  beforeAll(() => {
    gateway = synthGateway();
  }, SYNTH_TIMEOUT_MS);

  const queueId = (id: string) => {
    const found = gateway.stack.node.findAll().find((c) => c.node.path.endsWith(`/Queues/${id}`));
    return logicalId(gateway, found as never);
  };
  const arnOf = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
  const schedulerRole = () => {
    const roles = gateway.template.findResources('AWS::IAM::Role', {
      Properties: {
        AssumeRolePolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Principal: { Service: 'scheduler.amazonaws.com' } }),
          ]),
        },
      },
    });
    expect(Object.keys(roles)).toHaveLength(1);
    return Object.entries(roles)[0] as [string, { Properties: Record<string, unknown> }];
  };
  /** Ingest's RELEASE_TIMERS, with its tokens as CloudFormation intrinsics. */
  const timersEnv = () => {
    const fn = gateway.template.toJSON().Resources[logicalId(gateway, gateway.stack.ingest.fn as never)];
    const value = fn.Properties.Environment.Variables[ENV.releaseTimers];
    // Stack.toJsonString: a Fn::Join of JSON text and intrinsics; the text parts carry the literal settings.
    const text = (value['Fn::Join'][1] as unknown[])
      .map((p) => (typeof p === 'string' ? p : '<ref>'))
      .join('');
    return { parsed: JSON.parse(text), raw: value };
  };

  it('keeps one schedule group per stage', () => {
    gateway.template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', {
      Name: `${RELEASE_TIMERS.groupPrefix}${gateway.stack.node.tryGetContext('stage') ?? 'dev'}`,
    });
  });

  it('gives the scheduler a role that may only send to the lanes and the timers’ DLQ, for this account’s group', () => {
    const [roleId, role] = schedulerRole();
    expect(JSON.stringify(role.Properties.AssumeRolePolicyDocument)).toContain('aws:SourceAccount');
    expect(JSON.stringify(role.Properties.AssumeRolePolicyDocument)).toContain('aws:SourceArn');
    const statements = statementsOfRole(gateway.template, roleId);
    expect(actionsOf(statements)).toEqual(['sqs:SendMessage']);
    expect(new Set(resourcesOf(statements).map((r) => JSON.stringify(r)))).toEqual(
      new Set(
        ['high', 'normal', RELEASE_TIMERS.deadLetterQueueId].map((q) => JSON.stringify(arnOf(queueId(q)))),
      ),
    );
  });

  it('keeps undeliverable release notices 14 days in a dead-letter queue with an alarm', () => {
    gateway.template.hasResourceProperties('AWS::SQS::Queue', {
      MessageRetentionPeriod: 14 * 86_400,
    });
    const alarms = gateway.template.findResources('AWS::CloudWatch::Alarm');
    const onDlq = Object.values(alarms).filter((a) =>
      JSON.stringify(a.Properties.Dimensions ?? []).includes(queueId(RELEASE_TIMERS.deadLetterQueueId)),
    );
    expect(onDlq.length).toBeGreaterThan(0);
  });

  it('creates every schedule deleted after it fired, with a retry policy and the DLQ on its target', () => {
    const { parsed, raw } = timersEnv();
    expect(parsed).toMatchObject({
      actionAfterCompletion: 'DELETE',
      retry: RELEASE_TIMERS.retry,
      leadSeconds: RELEASE_TIMERS.leadSeconds,
    });
    expect(JSON.stringify(raw)).toContain(JSON.stringify(arnOf(queueId(RELEASE_TIMERS.deadLetterQueueId))));
    expect(JSON.stringify(raw)).toContain(JSON.stringify(arnOf(schedulerRole()[0])));
  });

  it('lets ingest create and delete only its group’s schedules and pass only the scheduler role, only to the scheduler', () => {
    const ingest = statementsOfRole(gateway.template, roleLogicalId(gateway, gateway.stack.ingest));
    const schedules = ingest.filter((st) => actionsOf([st]).some((a) => a.startsWith('scheduler:')));
    expect(JSON.stringify(resourcesOf(schedules))).toContain(`:schedule/${RELEASE_TIMERS.groupPrefix}`);
    expect(JSON.stringify(resourcesOf(schedules))).toContain('/*');
    const pass = ingest.filter((st) => actionsOf([st]).includes('iam:PassRole'));
    expect(resourcesOf(pass)).toEqual([arnOf(schedulerRole()[0])]);
    expect(JSON.stringify(pass)).toContain('"iam:PassedToService":"scheduler.amazonaws.com"');
    // No other function may touch the scheduler.
    for (const fn of [gateway.stack.sender, gateway.stack.callback, gateway.stack.notify]) {
      const actions = actionsOf(statementsOfRole(gateway.template, roleLogicalId(gateway, fn)));
      expect(actions.filter((a) => a.startsWith('scheduler:') || a === 'iam:PassRole')).toEqual([]);
    }
  });
});
