import { ArnFormat, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { type IRole, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type LaneName, type ReleaseTimerTarget, releaseTimerTarget } from '#lib/resources/index.js';

export interface ReleaseTimersProps {
  readonly stage: string;
  readonly lanes: Readonly<Record<LaneName, IQueue>>;
  /** Where EventBridge Scheduler puts a release notice it could not deliver within its retries. */
  readonly deadLetterQueue: IQueue;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * What the release timers of scheduled messages need in AWS (docs/scheduling.md): the stage's schedule group, and
 * the execution role EventBridge Scheduler assumes to put release notices in the lanes — SendMessage on the two
 * lanes and the timers' dead-letter queue, nothing else, and only for schedules of this account and group
 * (confused-deputy conditions, https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html). The
 * schedules themselves are made by ingest at run time, one `at()` schedule per message, with the settings of
 * {@link target} (lib/resources `RELEASE_TIMERS`).
 */
export class ReleaseTimers extends Construct {
  readonly group: ScheduleGroup;
  readonly role: IRole;
  /** The settings ingest gets as `RELEASE_TIMERS`. */
  readonly target: ReleaseTimerTarget;

  constructor(scope: Construct, id: string, props: ReleaseTimersProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const target = releaseTimerTarget(props.stage, {
      roleArn: '',
      laneArns: { high: props.lanes.high.queueArn, normal: props.lanes.normal.queueArn },
      deadLetterArn: props.deadLetterQueue.queueArn,
    });
    this.group = new ScheduleGroup(this, 'Group', {
      scheduleGroupName: target.groupName,
      removalPolicy: props.removalPolicy,
    });
    const role = new Role(this, 'SchedulerRole', {
      description: 'EventBridge Scheduler puts release notices of scheduled messages in the lanes',
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnEquals: { 'aws:SourceArn': this.group.scheduleGroupArn },
        },
      }),
    });
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['sqs:SendMessage'],
        resources: [props.lanes.high.queueArn, props.lanes.normal.queueArn, props.deadLetterQueue.queueArn],
      }),
    );
    this.role = role;
    // cdk-nag wants a DLQ to be some queue's redrive target; this one is EventBridge Scheduler's (Target
    // DeadLetterConfig), which no queue setting can express.
    Validations.of(props.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "It is the dead-letter queue of the release timers' EventBridge Scheduler target, set on each schedule " +
        '(lib/queue EventBridgeReleaseTimers), not through a redrive policy.',
    });
    this.target = { ...target, roleArn: role.roleArn };
  }

  /**
   * The ARN of every schedule of the group (`schedule/<group>/*`): what ingest may create and delete, and no
   * other group's (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoneventbridgescheduler.html).
   */
  schedulesArn(): string {
    return Stack.of(this).formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.target.groupName}/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  }
}
