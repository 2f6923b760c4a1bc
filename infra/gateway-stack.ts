import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import {
  FUNCTION_ACCESS,
  NOTIFY_EVENT_SOURCE,
  type QueueId,
  RELEASE_TIMERS,
  STACK_OUTPUTS,
  senderEventSources,
} from '#lib/resources/index.js';
import {
  ConfigSecret,
  FixedEgress,
  GatewayApi,
  GatewayFunction,
  type GatewayFunctionProps,
  GatewayQueues,
  GatewayTable,
  Monitoring,
  ReleaseTimers,
  type WecomReach,
} from './constructs/index.js';
import type { GatewayContext } from './context.js';

/** The props every GatewayFunction of the stack shares. */
type FunctionDefaults = Omit<GatewayFunctionProps, 'id'>;

export interface GatewayStackProps extends StackProps {
  readonly gateway: GatewayContext;
}

/**
 * Throws at synth unless the lanes' maxConcurrency sums to at most the sender's reserved concurrency:
 * otherwise Lambda throttles the event source's invocations and the throttled receives count toward
 * maxReceiveCount (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html).
 */
export function assertEventSourcesFit(
  reserved: number,
  sources: readonly { maxConcurrency: number }[],
): void {
  const total = sources.reduce((sum, s) => sum + s.maxConcurrency, 0);
  if (total > reserved) {
    throw new Error(
      `sender event sources' maxConcurrency sums to ${total}, above reserved concurrency ${reserved}`,
    );
  }
}

/** The whole gateway: HTTP API → ingest → SQS lanes → sender → WeCom, plus table, config and alarms. */
export class GatewayStack extends Stack {
  readonly ingest: GatewayFunction;
  readonly sender: GatewayFunction;
  readonly callback: GatewayFunction;
  readonly notify: GatewayFunction;

  constructor(scope: Construct, id: string, props: GatewayStackProps) {
    super(scope, id, props);
    const ctx = props.gateway;
    const isProd = ctx.stage === 'prod';
    // Production data and config outlive the stack; dev stacks clean up after themselves.
    const removalPolicy = isProd ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const logRetention = ctx.logRetentionDays;

    const { table } = new GatewayTable(this, 'Store', { protect: isProd, removalPolicy });
    const queues = new GatewayQueues(this, 'Queues', { removalPolicy });
    const config = new ConfigSecret(this, 'Config', { stage: ctx.stage, removalPolicy });
    const egress =
      ctx.egress === 'fixed'
        ? new FixedEgress(this, 'Egress', {
            logRetention,
            removalPolicy,
            ...(ctx.eipAllocationId !== undefined && { eipAllocationId: ctx.eipAllocationId }),
          })
        : undefined;
    // Every function gets the same props; GatewayFunction applies `wecom` only to those that call WeCom.
    const wecom: WecomReach = {
      apiBase: ctx.wecomApiBase,
      ...(egress && {
        egress: {
          vpc: egress.vpc,
          subnets: egress.functionSubnets,
          securityGroups: [egress.functionSecurityGroup],
        },
      }),
    };
    const common: FunctionDefaults = {
      stage: ctx.stage,
      logRetention,
      removalPolicy,
      tracing: ctx.tracing === 'active',
      wecom,
    };

    // One-time schedules that release messages scheduled beyond SQS's 15-minute delay (docs/scheduling.md).
    const timers = new ReleaseTimers(this, 'ReleaseTimers', {
      stage: ctx.stage,
      lanes: queues.lanes,
      deadLetterQueue: queues.byId[RELEASE_TIMERS.deadLetterQueueId],
      removalPolicy,
    });

    this.ingest = new GatewayFunction(this, 'Ingest', { id: 'ingest', ...common })
      .useTable(table, FUNCTION_ACCESS.ingest.table, FUNCTION_ACCESS.ingest.indexes)
      .useLanes(queues.lanes, FUNCTION_ACCESS.ingest.lanes)
      .useReleaseTimers(timers, FUNCTION_ACCESS.ingest.timers)
      .useLaneDeadLetters(queues.deadLetterQueues, FUNCTION_ACCESS.ingest.laneDlqs)
      .useNotifyQueues(queues, FUNCTION_ACCESS.ingest.notify)
      .useConfigSecret(config.secret);

    this.sender = this.senderFunction(ctx, common, table, queues, config);

    // WeCom's callbacks: verified, stored, and a wecom.event webhook queued for card events (SPEC §2).
    this.callback = new GatewayFunction(this, 'Callback', { id: 'callback', ...common })
      .useTable(table, FUNCTION_ACCESS.callback.table, FUNCTION_ACCESS.callback.indexes)
      .useNotifyQueues(queues, FUNCTION_ACCESS.callback.notify)
      .useConfigSecret(config.secret);

    this.notify = this.notifyFunction(common, table, queues, config);

    const gatewayApi = new GatewayApi(this, 'Api', {
      ingest: this.ingest.fn,
      callback: this.callback.fn,
      throttle: { burstLimit: ctx.apiBurstLimit, rateLimit: ctx.apiRateLimit },
      inboundThrottle: { burstLimit: ctx.hookBurstLimit, rateLimit: ctx.hookRateLimit },
      callbackThrottle: { burstLimit: ctx.callbackBurstLimit, rateLimit: ctx.callbackRateLimit },
      dedicatedHooks: ctx.hookRoutes,
      logRetention,
      removalPolicy,
    });

    const monitoring = new Monitoring(this, 'Monitoring', {
      stage: ctx.stage,
      lanes: queues.lanes,
      deadLetterQueues: queues.deadLetterQueues,
      sender: this.sender.fn,
      ingest: this.ingest.fn,
      callback: this.callback.fn,
      notify: this.notify.fn,
      notifyQueue: queues.notify,
      notifyDeadLetter: queues.notifyDeadLetter,
      releaseDeadLetter: queues.byId[RELEASE_TIMERS.deadLetterQueueId],
      api: gatewayApi.api,
      ...(ctx.alarmEmail !== undefined && { alarmEmail: ctx.alarmEmail }),
    });

    this.outputs(gatewayApi, monitoring, config, table, queues, egress);
  }

  /** The sender: reserved concurrency and one event source per lane (SPEC §4). */
  private senderFunction(
    ctx: GatewayContext,
    common: FunctionDefaults,
    table: ITableV2,
    queues: GatewayQueues,
    config: ConfigSecret,
  ): GatewayFunction {
    const sources = senderEventSources(ctx.senderConcurrency);
    assertEventSourcesFit(ctx.senderConcurrency, sources);
    const sender = new GatewayFunction(this, 'Sender', {
      id: 'sender',
      ...common,
      // The bound on parallel pressure on WeCom and on the quota counters (SPEC §4).
      reservedConcurrentExecutions: ctx.senderConcurrency,
      // Deferrals and retries put messages back into the lanes the sender consumes (see GatewayFunction).
      feedsOwnTrigger: true,
    })
      .useTable(table, FUNCTION_ACCESS.sender.table)
      // Deferrals re-enqueue a fresh copy (SendMessage); retries back off via ChangeMessageVisibility.
      .useLanes(queues.lanes, FUNCTION_ACCESS.sender.lanes)
      .useNotifyQueues(queues, FUNCTION_ACCESS.sender.notify)
      .useConfigSecret(config.secret);
    for (const source of sources) {
      sender.consume(queues.lanes[source.queueId], {
        batchSize: source.batchSize,
        maxBatchingWindow: Duration.seconds(source.maxBatchingWindowSeconds),
        maxConcurrency: source.maxConcurrency,
        // One bad record must not fail (and redeliver) the whole batch (SPEC §4).
        reportBatchItemFailures: true,
      });
    }

    return sender;
  }

  private notifyFunction(
    common: FunctionDefaults,
    table: ITableV2,
    queues: GatewayQueues,
    config: ConfigSecret,
  ): GatewayFunction {
    // Signed webhooks to the businesses. Outside the VPC: it must reach the internet, not WeCom's trusted IP.
    const notify = new GatewayFunction(this, 'Notify', { id: 'notify', ...common })
      .useTable(table, FUNCTION_ACCESS.notify.table)
      // Retries back off via ChangeMessageVisibility; a job whose ≥ 24 h of retries ran out goes to the DLQ.
      .useNotifyQueues(queues, FUNCTION_ACCESS.notify.notify, FUNCTION_ACCESS.notify.notifyDlq)
      .useConfigSecret(config.secret);
    // It never sends to its own queue (retries change visibility; exhausted jobs go to the DLQ), so no
    // recursive-loop setting is needed (GatewayFunction.consume checks).
    notify.consume(queues.notify, {
      batchSize: NOTIFY_EVENT_SOURCE.batchSize,
      maxBatchingWindow: Duration.seconds(NOTIFY_EVENT_SOURCE.maxBatchingWindowSeconds),
      maxConcurrency: NOTIFY_EVENT_SOURCE.maxConcurrency,
      reportBatchItemFailures: true,
    });

    return notify;
  }

  /** What an operator and the CLI need from the stack: URLs, names, the trusted IP. */
  private outputs(
    gatewayApi: GatewayApi,
    monitoring: Monitoring,
    config: ConfigSecret,
    table: ITableV2,
    queues: GatewayQueues,
    egress: FixedEgress | undefined,
  ): void {
    // The API's endpoint, without the trailing slash of the `$default` stage's URL: the docs and scripts append
    // `/v1/…` and `/console` to it, which would give `//v1/…`.
    new CfnOutput(this, 'ApiUrl', {
      value: gatewayApi.api.apiEndpoint,
      description: 'Base URL of the gateway API (no trailing slash)',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: monitoring.topic.topicArn,
      description:
        'Every alarm notifies this SNS topic (ALARM and OK); subscribe email, chat or paging to it.',
    });
    new CfnOutput(this, 'ConfigSecretName', {
      value: config.secretName,
      description:
        'Store the config JSON (SPEC §3) with: aws secretsmanager put-secret-value --secret-id <this> ' +
        '--secret-string file://config.json',
    });
    // The operator CLI finds the table and queues here (queue depths, the DLQ tools).
    new CfnOutput(this, STACK_OUTPUTS.tableName, {
      value: table.tableName,
      description: 'The DynamoDB table of message records (wecom-gateway dlq reads and updates them)',
    });
    for (const id of Object.keys(queues.byId) as QueueId[]) {
      new CfnOutput(this, STACK_OUTPUTS.queueUrl(id), {
        value: queues.byId[id].queueUrl,
        description: `URL of the SQS queue ${id} (wecom-gateway apps status, dlq)`,
      });
    }
    if (egress?.eip) {
      new CfnOutput(this, 'WecomTrustedIp', {
        value: egress.eip.attrPublicIp,
        description:
          "The only address WeCom calls come from (sends, recalls, tokens). Paste it into each WeCom app's 企业可信IP list " +
          '(应用管理 → 应用 → 企业可信IP), or WeCom rejects its API calls with errcode 60020.',
      });
    }
    if (egress) {
      new CfnOutput(this, 'WecomTrustedIpAllocationId', {
        value: egress.eipAllocationId,
        description:
          'The Elastic IP behind WecomTrustedIp. It is retained when the stack or its fixed egress goes away; ' +
          'set it as eipAllocationId in infra/stages.json to give a new stack the same trusted IP.',
      });
    }
  }
}
