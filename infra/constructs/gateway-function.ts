import { Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Function as LambdaFunction, RecursiveLoop, Tracing } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource, type SqsEventSourceProps } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { callsWecom, ENV, FUNCTIONS, type IndexName, type LaneName } from '#lib/resources/index.js';
import { functionCode, HANDLER, HOUSE_RUNTIME } from './bundling.js';
import type { ReleaseTimers } from './release-timers.js';

export type FunctionId = keyof typeof FUNCTIONS;

/** DynamoDB item actions a function may be granted; no Scan/Query/Batch* unless a function needs them. */
export type { TableAction } from '#lib/resources/index.js';

import type { LaneAction, LaneDlqAction, NotifyQueueAction, TableAction } from '#lib/resources/index.js';
/** SQS producer-side actions; consuming (Receive/Delete) comes with the event source's own grant. */
export type QueueAction = LaneAction;

const VPC_ACCESS_POLICY = 'service-role/AWSLambdaVPCAccessExecutionRole';

const LANE_URL_ENV: Record<LaneName, string> = { high: ENV.queueUrlHigh, normal: ENV.queueUrlNormal };
const LANE_DLQ_URL_ENV: Record<LaneName, string> = { high: ENV.dlqUrlHigh, normal: ENV.dlqUrlNormal };

export interface GatewayFunctionProps {
  /** Key into `FUNCTIONS` (lib/resources): entry, memory and timeout come from there. */
  readonly id: FunctionId;
  /** The deployment stage: the function's metric namespace (`GATEWAY_STAGE`). */
  readonly stage: string;
  readonly logRetention: RetentionDays;
  /** Applied to the function's log group. */
  readonly removalPolicy: RemovalPolicy;
  readonly environment?: Readonly<Record<string, string>>;
  readonly reservedConcurrentExecutions?: number;
  /**
   * The function writes to a queue that triggers it (the sender's deferred copies and retries; a notify
   * function re-enqueuing its own retries). Lambda's recursive loop detection would otherwise stop invoking it
   * for a message whose chain grows past about 16 hops; see {@link GatewayFunction.consume}. Default false:
   * synth fails if such a function does not say so.
   */
  readonly feedsOwnTrigger?: boolean;
  /** Lambda active tracing (X-Ray): a trace per invocation, with its AWS SDK calls' timing. Default off. */
  readonly tracing?: boolean;
  /**
   * How the function reaches WeCom, if it calls WeCom at all (lib/resources `FUNCTION_ACCESS[id].wecom`): the base
   * URL it gets as `WECOM_API_BASE` and, with fixed egress, the private subnets whose only way out is the NAT
   * with the trusted IP. Ignored for a function that never calls WeCom, which stays out of the VPC. Every
   * function is handed the same value, so a new WeCom caller gets both by declaring its calls.
   */
  readonly wecom: WecomReach;
}

export interface WecomReach {
  readonly apiBase: string;
  readonly egress?: {
    readonly vpc: IVpc;
    readonly subnets: SubnetSelection;
    readonly securityGroups?: ISecurityGroup[];
  };
}

/**
 * The house Lambda function: our runtime, architecture, ESM bundling with code splitting (bundling.ts) and logging
 * defaults (STYLE rule 6). The role starts empty except for writing to the function's own log group;
 * every other permission comes from a `use*` helper that also sets the matching environment variable,
 * so a grant and the name the code reads cannot drift apart.
 *
 * @example
 * const ingest = new GatewayFunction(this, 'Ingest', { id: 'ingest', stage, logRetention, removalPolicy });
 * ingest.useTable(table, ['GetItem', 'PutItem']);
 */
export class GatewayFunction extends Construct {
  readonly fn: LambdaFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  /** Queues the function may SendMessage to, and queues that trigger it: their overlap is a recursive loop. */
  private readonly producesTo = new Set<IQueue>();
  private readonly consumes = new Set<IQueue>();

  constructor(scope: Construct, id: string, props: GatewayFunctionProps) {
    super(scope, id);
    const definition = FUNCTIONS[props.id];

    // An explicit log group gives us retention without the LogRetention custom resource (and its
    // Lambda); a log group the function would create itself would live forever.
    this.logGroup = new LogGroup(this, 'LogGroup', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });

    // Our own role instead of the default one: the default attaches AWSLambdaBasicExecutionRole, whose
    // logs permissions cover every log group in the account (cdk-nag AwsSolutions-IAM4).
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `wecom-gateway ${props.id} function`,
    });
    this.logGroup.grantWrite(this.role);
    const egress = callsWecom(props.id) ? props.wecom.egress : undefined;
    if (egress) {
      // Lambda creates and deletes the ENIs of a VPC function with the function's role; those EC2 actions
      // do not support resource-level permissions, hence the AWS managed policy
      // (https://docs.aws.amazon.com/lambda/latest/dg/configuration-vpc.html#configuration-vpc-permissions).
      this.role.addManagedPolicy(ManagedPolicy.fromAwsManagedPolicyName(VPC_ACCESS_POLICY));
      Validations.of(this.role).acknowledge({
        id: `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${VPC_ACCESS_POLICY}]`,
        reason:
          'Lambda manages the ENIs of a VPC function through its execution role; the EC2 network-interface ' +
          'actions involved support no resource-level scoping, and AWS documents this managed policy for it.',
      });
    }

    if (props.tracing) {
      // Active tracing makes CDK grant xray:PutTraceSegments and xray:PutTelemetryRecords, which support no
      // resource-level permissions (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsx-ray.html).
      Validations.of(this.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Lambda active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which X-Ray only ' +
          'grants on resource "*"; no other statement of this role has a wildcard (test/infra/iam.test.ts).',
      });
    }

    this.fn = new LambdaFunction(this, 'Function', {
      code: functionCode(props.id),
      handler: HANDLER,
      runtime: HOUSE_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: definition.memoryMb,
      timeout: Duration.seconds(definition.timeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      // Lambda's recursive loop detection (default Terminate) follows the X-Amzn-Trace-Id that the AWS SDK v3
      // propagates into SQS messages, and stops invoking a function once one chain of events has gone round
      // the same queue about 16 times (https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html).
      // The sender's deferrals and retries go round exactly that way on purpose: a message waiting out a day
      // quota takes dozens of hops, and would silently stop being delivered. Such a function bounds its loop
      // itself (the sender: maxReceiveCount for retries, `exceeds_quota` for deferrals), so it opts out.
      ...(props.feedsOwnTrigger && { recursiveLoop: RecursiveLoop.ALLOW }),
      ...(props.tracing && { tracing: Tracing.ACTIVE }),
      environment: {
        // No --enable-source-maps: it reads every source map while the modules load (~25 ms of each cold start);
        // logged errors are mapped to the TypeScript sources on the error path instead (lib/observability
        // stack-map.ts), from the maps the bundle ships.
        [ENV.logLevel]: 'info',
        [ENV.stage]: props.stage,
        ...(callsWecom(props.id) && { [ENV.wecomApiBase]: props.wecom.apiBase }),
        ...props.environment,
      },
      ...(egress && {
        vpc: egress.vpc,
        vpcSubnets: egress.subnets,
        securityGroups: egress.securityGroups,
      }),
    });

    this.node.addValidation({
      validate: () =>
        !props.feedsOwnTrigger && [...this.consumes].some((q) => this.producesTo.has(q))
          ? [
              `${props.id} sends to a queue that triggers it: set feedsOwnTrigger (and bound the loop in code), ` +
                "or Lambda's recursive loop detection stops it after about 16 hops of one message",
            ]
          : [],
    });
  }

  /**
   * Subscribes the function to `queue` (an SQS event source mapping). Together with a SendMessage grant on the
   * same queue this makes a loop, which synth refuses unless the function was built with `feedsOwnTrigger`.
   */
  consume(queue: IQueue, props: SqsEventSourceProps): this {
    this.fn.addEventSource(new SqsEventSource(queue, props));
    this.consumes.add(queue);
    return this;
  }

  /**
   * Grants exactly `actions` on the table and Query on each of `indexes` (lib/resources `TABLE_INDEXES`, ARNs of
   * their own), and hands the function the table's name in `TABLE_NAME`.
   */
  useTable(table: ITableV2, actions: readonly TableAction[], indexes: readonly IndexName[] = []): this {
    this.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: actions.map((a) => `dynamodb:${a}`), resources: [table.tableArn] }),
    );
    if (indexes.length > 0) {
      this.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['dynamodb:Query'],
          resources: indexes.map((name) => `${table.tableArn}/index/${name}`),
        }),
      );
    }
    this.fn.addEnvironment(ENV.tableName, table.tableName);
    return this;
  }

  /**
   * Grants exactly `actions` on the notify queue (`NOTIFY_QUEUE_URL`) and, when given, `deadLetterActions` on its
   * DLQ (`NOTIFY_DLQ_URL`). Consuming comes with the event source's own grant.
   */
  useNotifyQueues(
    queues: { readonly notify: IQueue; readonly notifyDeadLetter: IQueue },
    actions: readonly NotifyQueueAction[],
    deadLetterActions: readonly NotifyQueueAction[] = [],
  ): this {
    if (actions.length > 0) {
      this.role.addToPrincipalPolicy(
        new PolicyStatement({ actions: actions.map((a) => `sqs:${a}`), resources: [queues.notify.queueArn] }),
      );
      if (actions.includes('SendMessage')) this.producesTo.add(queues.notify);
    }
    this.fn.addEnvironment(ENV.notifyQueueUrl, queues.notify.queueUrl);
    if (deadLetterActions.length > 0) {
      this.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: deadLetterActions.map((a) => `sqs:${a}`),
          resources: [queues.notifyDeadLetter.queueArn],
        }),
      );
      this.fn.addEnvironment(ENV.notifyDlqUrl, queues.notifyDeadLetter.queueUrl);
    }
    return this;
  }

  /** Grants exactly `actions` on both lanes and hands the function their URLs (`QUEUE_URL_HIGH`/`_NORMAL`). */
  useLanes(lanes: Readonly<Record<LaneName, IQueue>>, actions: readonly QueueAction[]): this {
    const queues = Object.values(lanes);
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: actions.map((a) => `sqs:${a}`),
        resources: queues.map((q) => q.queueArn),
      }),
    );
    for (const [lane, queue] of Object.entries(lanes) as [LaneName, IQueue][]) {
      this.fn.addEnvironment(LANE_URL_ENV[lane], queue.queueUrl);
      if (actions.includes('SendMessage')) this.producesTo.add(queue);
    }
    return this;
  }

  /**
   * Grants exactly `actions` on both lanes' dead-letter queues and hands the function their URLs
   * (`DLQ_URL_HIGH`/`_NORMAL`): the operator's reads and redrives over HTTP (lib/ops/dlq.ts). Nothing consumes
   * those queues, so ReceiveMessage here is the only reader's grant.
   */
  useLaneDeadLetters(
    deadLetters: readonly { readonly lane: LaneName; readonly queue: IQueue }[],
    actions: readonly LaneDlqAction[],
  ): this {
    if (actions.length === 0) return this;
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: actions.map((a) => `sqs:${a}`),
        resources: deadLetters.map((d) => d.queue.queueArn),
      }),
    );
    for (const { lane, queue } of deadLetters) this.fn.addEnvironment(LANE_DLQ_URL_ENV[lane], queue.queueUrl);
    return this;
  }

  /**
   * Lets the function set and remove release timers (lib/queue `EventBridgeReleaseTimers`): CreateSchedule and
   * DeleteSchedule on the schedules of the stage's group only, and PassRole of the scheduler's execution role to
   * EventBridge Scheduler only; hands over the timers' settings (`RELEASE_TIMERS`).
   */
  useReleaseTimers(timers: ReleaseTimers, actions: readonly ('CreateSchedule' | 'DeleteSchedule')[]): this {
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: actions.map((a) => `scheduler:${a}`),
        resources: [timers.schedulesArn()],
      }),
    );
    if (actions.includes('CreateSchedule')) {
      this.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['iam:PassRole'],
          resources: [timers.role.roleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
        }),
      );
    }
    Validations.of(this.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${timers.target.groupName}/*]`,
      reason:
        'One schedule per scheduled message, named after it at run time: the grant covers the schedules of the ' +
        "stage's own group and no other (test/infra/release-timers.test.ts).",
    });
    this.fn.addEnvironment(ENV.releaseTimers, Stack.of(this).toJsonString(timers.target));
    return this;
  }

  /** Grants `secretsmanager:GetSecretValue` on the config secret and hands over its ARN (`CONFIG_SECRET_ID`). */
  useConfigSecret(secret: ISecret): this {
    // Not `grantRead`: it adds DescribeSecret, which the config loader never calls.
    this.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secret.secretArn] }),
    );
    this.fn.addEnvironment(ENV.configSecretId, secret.secretArn);
    return this;
  }
}
