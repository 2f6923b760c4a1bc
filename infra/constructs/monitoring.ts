import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
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
import { METRIC_NAMES, METRICS_NAMESPACE } from '../metrics.js';

/**
 * Age of the oldest message that means a lane is stuck rather than waiting for quota. Alerts (high) should
 * leave within minutes; normal messages may legitimately wait out WeCom's per-member hourly window.
 */
export const LANE_AGE_ALARM_SECONDS: Readonly<Record<LaneName, number>> = { high: 300, normal: 3600 };

export interface MonitoringProps {
  readonly lanes: Readonly<Record<LaneName, IQueue>>;
  readonly deadLetterQueues: readonly { readonly lane: LaneName; readonly queue: IQueue }[];
  readonly sender: IFunction;
  readonly ingest: IFunction;
  readonly api: HttpApi;
  /** When set, alarms notify this address through an SNS topic. */
  readonly alarmEmail?: string;
}

const ONE_MINUTE = Duration.minutes(1);
const FIVE_MINUTES = Duration.minutes(5);

/** Alarms on the things that lose or delay messages, and one dashboard with the key graphs. */
export class Monitoring extends Construct {
  readonly alarms: Alarm[] = [];
  readonly topic?: Topic;
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const prefix = Stack.of(this).stackName;

    if (props.alarmEmail) {
      this.topic = new Topic(this, 'AlarmTopic', { displayName: `${prefix} alarms`, enforceSSL: true });
      this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
      Validations.of(this.topic).acknowledge({
        id: 'AwsSolutions-SNS2',
        reason:
          'CloudWatch alarms cannot publish to a topic encrypted with the AWS managed aws/sns key ' +
          '(https://repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger); the ' +
          'notifications carry alarm names and metric values only, not worth a customer managed key.',
      });
    }

    const alarm = (alarmId: string, metric: IMetric, threshold: number, description: string): Alarm => {
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
      if (this.topic) {
        created.addAlarmAction(new SnsAction(this.topic));
        created.addOkAction(new SnsAction(this.topic));
      }
      this.alarms.push(created);
      return created;
    };

    for (const { lane, queue } of props.deadLetterQueues) {
      alarm(
        `dlq-${lane}`,
        queue.metricApproximateNumberOfMessagesVisible({ period: ONE_MINUTE, statistic: Stats.MAXIMUM }),
        0,
        `Messages of the ${lane} lane exhausted their retries (status dead). Inspect them and fix the cause. Do not use a raw SQS redrive: redriven copies count as first deliveries and skip the gateway's duplicate protection.`,
      );
    }
    for (const [lane, queue] of Object.entries(props.lanes) as [LaneName, IQueue][]) {
      alarm(
        `age-${lane}`,
        queue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: Stats.MAXIMUM }),
        LANE_AGE_ALARM_SECONDS[lane],
        `The oldest ${lane} message waited over ${LANE_AGE_ALARM_SECONDS[lane]} s: the sender is stuck or starved.`,
      );
    }
    alarm(
      'sender-errors',
      props.sender.metricErrors({ period: FIVE_MINUTES, statistic: Stats.SUM }),
      0,
      'The sender threw: with partial batch responses that is a bug, and the whole batch is retried.',
    );
    alarm(
      'sender-throttles',
      props.sender.metricThrottles({ period: FIVE_MINUTES, statistic: Stats.SUM }),
      0,
      'The sender was throttled: event source maxConcurrency exceeds its reserved concurrency.',
    );
    alarm(
      'api-5xx',
      props.api.metricServerError({ period: FIVE_MINUTES, statistic: Stats.SUM }),
      0,
      'The API answered 5xx: ingest crashed, timed out or could not reach SQS/DynamoDB.',
    );
    alarm(
      'rate-limited',
      this.custom(METRIC_NAMES.rateLimited, FIVE_MINUTES),
      0,
      'WeCom answered 45009 (frequency limit): the quota settings are above what WeCom allows the app.',
    );

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: prefix,
      defaultInterval: Duration.hours(3),
    });
    const lanes = Object.entries(props.lanes) as [LaneName, IQueue][];
    this.dashboard.addWidgets(
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
        title: 'WeCom gettoken calls and 45009 rate limits',
        width: 12,
        left: [this.custom(METRIC_NAMES.getTokenCalls, ONE_MINUTE)],
        right: [this.custom(METRIC_NAMES.rateLimited, ONE_MINUTE)],
      }),
    );
    this.dashboard.addWidgets(
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
    this.dashboard.addWidgets(
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
    this.dashboard.addWidgets(
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
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', width: 24, alarms: this.alarms }));
  }

  private custom(metricName: string, period: Duration): Metric {
    return new Metric({ namespace: METRICS_NAMESPACE, metricName, period, statistic: Stats.SUM });
  }
}
