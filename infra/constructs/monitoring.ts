import { Annotations, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  Stats,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { LaneName } from '#lib/resources/index.js';
import { APP_DIMENSION, METRIC_NAMES, metricsNamespace, ROBOT_DIMENSION } from '../metrics.js';

/**
 * Age of the oldest message that means a lane is stuck rather than waiting for quota. Alerts (high) should
 * leave within minutes; normal messages may legitimately wait out WeCom's per-member hourly window.
 */
export const LANE_AGE_ALARM_SECONDS: Readonly<Record<LaneName, number>> = { high: 300, normal: 3600 };

/**
 * A dead message waiting this long in its DLQ means nobody is handling it. SQS deletes it 14 days after it was
 * first enqueued (lib/resources), so at least 7 days after it died: this leaves days to act. (For a DLQ of a
 * standard queue, ApproximateAgeOfOldestMessage counts from the move to the DLQ:
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html.)
 */
export const DLQ_AGE_ALARM_SECONDS = 3 * 24 * 3600;

/** Share of the messages WeCom refused for good (status `failed`) in 5 minutes that alarms. */
export const FAILED_RATE_ALARM_PERCENT = 10;

/** Retries last ≥ 24 h with backoff capped at 2 h (lib/webhooks DEFAULT_WEBHOOK_RETRY): older means stuck. */
export const NOTIFY_AGE_ALARM_SECONDS = 27 * 3600;

export interface MonitoringProps {
  /** The stage whose metric namespace the alarms and dashboard read. */
  readonly stage: string;
  readonly lanes: Readonly<Record<LaneName, IQueue>>;
  readonly deadLetterQueues: readonly { readonly lane: LaneName; readonly queue: IQueue }[];
  readonly sender: IFunction;
  readonly ingest: IFunction;
  readonly callback: IFunction;
  readonly notify: IFunction;
  readonly notifyQueue: IQueue;
  readonly notifyDeadLetter: IQueue;
  /** Release notices of scheduled messages EventBridge Scheduler could not deliver (lib/resources `RELEASE_TIMERS`). */
  readonly releaseDeadLetter: IQueue;
  readonly api: HttpApi;
  /** When set, the alarm topic has an email subscription for this address. */
  readonly alarmEmail?: string;
}

const ONE_MINUTE = Duration.minutes(1);
const FIVE_MINUTES = Duration.minutes(5);

/**
 * Alarms on the things that lose, delay or refuse messages, all notifying one SNS topic (ALARM and OK), and one
 * dashboard with the key graphs. The topic always exists, so subscribers (email, chat, paging) can be added
 * outside the stack; `alarmEmail` subscribes one address.
 */
export class Monitoring extends Construct {
  readonly alarms: Alarm[] = [];
  readonly topic: Topic;
  readonly dashboard: Dashboard;
  private readonly namespace: string;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.namespace = metricsNamespace(props.stage);
    this.topic = this.alarmTopic(props);
    this.queueAlarms(props);
    this.functionAlarms(props);
    this.gatewayMetricAlarms();
    this.dashboard = this.buildDashboard(props);
  }

  /** The SNS topic every alarm notifies (ALARM and OK), with `alarmEmail` subscribed. */
  private alarmTopic(props: MonitoringProps): Topic {
    const prefix = Stack.of(this).stackName;
    const topic = new Topic(this, 'AlarmTopic', { displayName: `${prefix} alarms`, enforceSSL: true });
    if (props.alarmEmail) {
      topic.addSubscription(new EmailSubscription(props.alarmEmail));
    } else if (props.stage === 'prod') {
      Annotations.of(this).addWarningV2(
        'wecom-gateway:alarms-unsubscribed',
        'prod has no alarmEmail: its alarms go to an SNS topic nobody subscribes to. Set alarmEmail in ' +
          'infra/stages.json, or subscribe to the AlarmTopicArn output yourself.',
      );
    }
    Validations.of(topic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason:
        'CloudWatch alarms cannot publish to a topic encrypted with the AWS managed aws/sns key ' +
        '(https://repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger); the ' +
        'notifications carry alarm names and metric values only, not worth a customer managed key.',
    });

    return topic;
  }

  private alarm(alarmId: string, metric: IMetric, threshold: number, description: string): Alarm {
    const prefix = Stack.of(this).stackName;
    const created = new Alarm(this, alarmId, {
      alarmName: `${prefix}-${alarmId}`,
      alarmDescription: description,
      metric,
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      // No data means no messages / no invocations, which is healthy.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    created.addAlarmAction(new SnsAction(this.topic));
    created.addOkAction(new SnsAction(this.topic));
    this.alarms.push(created);
    return created;
  }

  /** Messages dead in a DLQ, or waiting too long in a lane or the notify queue. */
  private queueAlarms(props: MonitoringProps): void {
    for (const { lane, queue } of props.deadLetterQueues) {
      this.alarm(
        `dlq-${lane}`,
        queue.metricApproximateNumberOfMessagesVisible({ period: ONE_MINUTE, statistic: Stats.MAXIMUM }),
        0,
        `Messages of the ${lane} lane exhausted their retries (status dead). Inspect them and fix the cause. Do not use a raw SQS redrive: redriven copies count as first deliveries and skip the gateway's duplicate protection.`,
      );
      this.alarm(
        `dlq-age-${lane}`,
        queue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: Stats.MAXIMUM }),
        DLQ_AGE_ALARM_SECONDS,
        `A dead ${lane} message has waited in its DLQ for over ${DLQ_AGE_ALARM_SECONDS / 86_400} days. SQS deletes it 14 days after it was first queued: handle it before then.`,
      );
    }
    for (const [lane, queue] of Object.entries(props.lanes) as [LaneName, IQueue][]) {
      this.alarm(
        `age-${lane}`,
        queue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: Stats.MAXIMUM }),
        LANE_AGE_ALARM_SECONDS[lane],
        `The oldest ${lane} message waited over ${LANE_AGE_ALARM_SECONDS[lane]} s: the sender is stuck or starved.`,
      );
    }
    this.alarm(
      'release-dlq',
      props.releaseDeadLetter.metricApproximateNumberOfMessagesVisible({
        period: ONE_MINUTE,
        statistic: Stats.MAXIMUM,
      }),
      0,
      'EventBridge Scheduler could not put the release notice of a scheduled message in its lane for a day: the ' +
        'message stays scheduled. Fix the cause (the scheduler role, a deleted queue), then move the notices back to ' +
        'the normal lane (aws sqs start-message-move-task): the sender releases each one still scheduled.',
    );
    this.alarm(
      'release-dlq-age',
      props.releaseDeadLetter.metricApproximateAgeOfOldestMessage({
        period: FIVE_MINUTES,
        statistic: Stats.MAXIMUM,
      }),
      DLQ_AGE_ALARM_SECONDS,
      `A release notice has waited in the release timers' DLQ for over ${DLQ_AGE_ALARM_SECONDS / 86_400} days. SQS deletes it 14 days after it was first queued: move it back to the normal lane before then.`,
    );
    this.alarm(
      'notify-dlq',
      props.notifyDeadLetter.metricApproximateNumberOfMessagesVisible({
        period: ONE_MINUTE,
        statistic: Stats.MAXIMUM,
      }),
      0,
      'A webhook failed for over 24 h and its job is in the notify DLQ (the message shows webhook_status dead): ' +
        "the business's receiver is down or rejects our signature. Fix it, then send the jobs back to the notify queue.",
    );
    this.alarm(
      'notify-dlq-age',
      props.notifyDeadLetter.metricApproximateAgeOfOldestMessage({
        period: FIVE_MINUTES,
        statistic: Stats.MAXIMUM,
      }),
      DLQ_AGE_ALARM_SECONDS,
      `A dead webhook job has waited in the notify DLQ for over ${DLQ_AGE_ALARM_SECONDS / 86_400} days. SQS deletes it 14 days after it was first queued: send it back to the notify queue before then, or accept the loss.`,
    );
    this.alarm(
      'notify-age',
      props.notifyQueue.metricApproximateAgeOfOldestMessage({
        period: FIVE_MINUTES,
        statistic: Stats.MAXIMUM,
      }),
      NOTIFY_AGE_ALARM_SECONDS,
      'A webhook job is older than its 24 h of retries plus the last backoff: the notify function is not running.',
    );
  }

  /** The functions and the API themselves: errors, throttles, 5xx. */
  private functionAlarms(props: MonitoringProps): void {
    this.alarm(
      'sender-errors',
      props.sender.metricErrors({ period: FIVE_MINUTES, statistic: Stats.SUM }),
      0,
      'The sender threw: with partial batch responses that is a bug, and the whole batch is retried.',
    );
    this.alarm(
      'sender-throttles',
      props.sender.metricThrottles({ period: FIVE_MINUTES, statistic: Stats.SUM }),
      0,
      'The sender was throttled: event source maxConcurrency exceeds its reserved concurrency.',
    );
    this.alarm(
      'api-5xx',
      props.api.metricServerError({ period: FIVE_MINUTES, statistic: Stats.SUM }),
      0,
      'The API answered 5xx: ingest crashed, timed out or could not reach SQS/DynamoDB.',
    );
    for (const [name, fn] of [
      ['callback', props.callback],
      ['notify', props.notify],
    ] as const) {
      this.alarm(
        `${name}-errors`,
        fn.metricErrors({ period: FIVE_MINUTES, statistic: Stats.SUM }),
        0,
        `The ${name} function threw or timed out${name === 'callback' ? ' (WeCom retries the callback three times)' : ''}.`,
      );
    }
  }

  /** The gateway's own metrics: 45009s, failed and dead messages, config errors, webhooks not queued. */
  private gatewayMetricAlarms(): void {
    this.alarm(
      'webhook-enqueue-failed',
      this.custom(METRIC_NAMES.webhookEnqueueFailed, FIVE_MINUTES),
      0,
      'A status webhook could not be queued (SQS unavailable): the status is stored, but the business was not told.',
    );
    this.alarm(
      'rate-limited',
      this.custom(METRIC_NAMES.rateLimited, FIVE_MINUTES),
      0,
      'WeCom answered 45009 (frequency limit): the quota settings are above what WeCom allows the app.',
    );
    this.alarm(
      'failed-rate',
      new MathExpression({
        // FILL: a period with sends but no failure is 0 %, not missing; a period with neither stays missing.
        expression: '100 * FILL(failed, 0) / (FILL(sent, 0) + FILL(failed, 0))',
        usingMetrics: {
          failed: this.custom(METRIC_NAMES.failed, FIVE_MINUTES),
          sent: this.custom(METRIC_NAMES.sent, FIVE_MINUTES),
        },
        period: FIVE_MINUTES,
        label: 'failed %',
      }),
      FAILED_RATE_ALARM_PERCENT,
      `Over ${FAILED_RATE_ALARM_PERCENT} % of the messages handled in 5 minutes failed for good: WeCom refused them (see error.wecom_errcode in their status).`,
    );
    this.alarm(
      'dead',
      this.custom(METRIC_NAMES.dead, FIVE_MINUTES),
      0,
      'Messages exhausted their retries in the last 5 minutes (status dead). Unlike the DLQ-depth alarm, this one fires again for every new dead message.',
    );
    this.alarm(
      'config-error',
      this.custom(METRIC_NAMES.configError, FIVE_MINUTES),
      0,
      "WeCom refused an app's setup (40001 wrong secret, 60020 IP not in the app's trusted list, 301002 wrong agentid…): that app's messages wait (deferred) and fail with wecom_config_error once it has been paused for delivery.configErrorHoldSeconds (1 h by default); fix the config or the WeCom console before then. The dashboard shows which app.",
    );
    this.alarm(
      'robot-config-error',
      this.custom(METRIC_NAMES.robotConfigError, FIVE_MINUTES),
      0,
      "WeCom refused a group robot's key: 93000 (wrong key, or the robot was removed from its group), 93004 (robot disabled) or 93008 (robot not in the group). That robot's circuit is open: its messages wait (deferred) and fail with wecom_config_error after delivery.configErrorHoldSeconds (1 h by default). GET /v1/robots/{robot} names the robot, the errcode and the fix.",
    );
    this.alarm(
      'config-reload-failed',
      this.custom(METRIC_NAMES.configReloadFailed, FIVE_MINUTES),
      0,
      'A function could not re-read the config secret, or found it invalid, and keeps running with its last good config: fix the secret (the function log names the bad field).',
    );
  }

  /** One dashboard with the key graphs and every alarm's state. */
  private buildDashboard(props: MonitoringProps): Dashboard {
    const prefix = Stack.of(this).stackName;
    const dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: prefix,
      defaultInterval: Duration.hours(3),
    });
    this.addMessageRows(dashboard);
    this.addQueueAndApiRows(dashboard, props);
    this.addFunctionRows(dashboard, props);
    dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', width: 24, alarms: this.alarms }));
    return dashboard;
  }

  /** Messages per minute, WeCom's answers, and the per-app series. */
  private addMessageRows(dashboard: Dashboard): void {
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Messages per minute',
        width: 12,
        left: [
          METRIC_NAMES.sent,
          METRIC_NAMES.failed,
          METRIC_NAMES.dead,
          METRIC_NAMES.deferred,
          METRIC_NAMES.retried,
        ].map((name) => this.custom(name, ONE_MINUTE)),
      }),
      new GraphWidget({
        title: 'WeCom gettoken calls, 45009 rate limits and config errors',
        width: 12,
        left: [this.custom(METRIC_NAMES.getTokenCalls, ONE_MINUTE)],
        right: [METRIC_NAMES.rateLimited, METRIC_NAMES.configError].map((name) =>
          this.custom(name, ONE_MINUTE),
        ),
      }),
    );
    // Apps and robots live in the config, not in the stack: a search finds every one's series.
    const perDimension = (dimension: string, names: readonly string[]) =>
      names.map(
        (name) =>
          new MathExpression({
            expression: `SEARCH('{${this.namespace},${dimension}} MetricName="${name}"', 'Sum', 60)`,
            usingMetrics: {},
            label: name,
            period: ONE_MINUTE,
          }),
      );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Per app: sent, failed, deferred, config errors (per minute)',
        width: 12,
        left: perDimension(APP_DIMENSION, [
          METRIC_NAMES.sent,
          METRIC_NAMES.failed,
          METRIC_NAMES.deferred,
          METRIC_NAMES.configError,
        ]),
      }),
      new GraphWidget({
        title: 'Per group robot: sent, failed, deferred, key refused (per minute)',
        width: 12,
        left: perDimension(ROBOT_DIMENSION, [
          METRIC_NAMES.sent,
          METRIC_NAMES.failed,
          METRIC_NAMES.deferred,
          METRIC_NAMES.robotConfigError,
        ]),
      }),
    );
  }

  /** Queue depths and ages, API requests and latency. */
  private addQueueAndApiRows(dashboard: Dashboard, props: MonitoringProps): void {
    const lanes = Object.entries(props.lanes) as [LaneName, IQueue][];
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Queue depth (visible)',
        width: 12,
        left: lanes.map(([lane, q]) =>
          q.metricApproximateNumberOfMessagesVisible({
            label: lane,
            period: ONE_MINUTE,
            statistic: Stats.MAXIMUM,
          }),
        ),
        right: props.deadLetterQueues.map(({ lane, queue }) =>
          queue.metricApproximateNumberOfMessagesVisible({
            label: `${lane} DLQ`,
            period: ONE_MINUTE,
            statistic: Stats.MAXIMUM,
          }),
        ),
      }),
      new GraphWidget({
        title: 'Age of oldest message (s)',
        width: 12,
        left: lanes.map(([lane, q]) =>
          q.metricApproximateAgeOfOldestMessage({
            label: lane,
            period: ONE_MINUTE,
            statistic: Stats.MAXIMUM,
          }),
        ),
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'API requests and errors',
        width: 12,
        left: [props.api.metricCount({ period: ONE_MINUTE, statistic: Stats.SUM })],
        right: [
          props.api.metricClientError({ period: ONE_MINUTE, statistic: Stats.SUM }),
          props.api.metricServerError({ period: ONE_MINUTE, statistic: Stats.SUM }),
        ],
      }),
      new GraphWidget({
        title: 'API latency (ms)',
        width: 12,
        left: [Stats.p(50), Stats.p(99)].map((statistic) =>
          props.api.metricLatency({ period: ONE_MINUTE, statistic, label: `latency ${statistic}` }),
        ),
        right: [
          props.ingest.metricDuration({ period: ONE_MINUTE, statistic: Stats.p(99), label: 'ingest p99' }),
        ],
      }),
    );
  }

  /** The sender's duration and concurrency, callbacks and webhooks. */
  private addFunctionRows(dashboard: Dashboard, props: MonitoringProps): void {
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Sender duration (ms)',
        width: 12,
        left: [Stats.p(50), Stats.p(99), Stats.MAXIMUM].map((statistic) =>
          props.sender.metricDuration({ period: ONE_MINUTE, statistic, label: statistic }),
        ),
      }),
      new GraphWidget({
        title: 'Sender concurrency, errors, throttles',
        width: 12,
        left: [
          props.sender.metric('ConcurrentExecutions', {
            period: ONE_MINUTE,
            statistic: Stats.MAXIMUM,
            label: 'concurrent executions',
          }),
        ],
        right: [
          props.sender.metricErrors({ period: ONE_MINUTE, statistic: Stats.SUM }),
          props.sender.metricThrottles({ period: ONE_MINUTE, statistic: Stats.SUM }),
        ],
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'WeCom callbacks per minute',
        width: 12,
        left: [METRIC_NAMES.callbacksStored, METRIC_NAMES.callbacksRejected].map((n) =>
          this.custom(n, ONE_MINUTE),
        ),
      }),
      new GraphWidget({
        title: 'Webhooks per minute',
        width: 12,
        left: [METRIC_NAMES.webhooksDelivered, METRIC_NAMES.webhookRetries, METRIC_NAMES.webhooksDead].map(
          (n) => this.custom(n, ONE_MINUTE),
        ),
      }),
    );
  }

  private custom(metricName: string, period: Duration): Metric {
    return new Metric({ namespace: this.namespace, metricName, period, statistic: Stats.SUM });
  }
}
