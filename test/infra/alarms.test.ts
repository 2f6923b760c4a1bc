import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '#lib/resources/index.js';
import {
  DLQ_AGE_ALARM_SECONDS,
  FAILED_RATE_ALARM_PERCENT,
  LANE_AGE_ALARM_SECONDS,
  NOTIFY_AGE_ALARM_SECONDS,
} from '../../infra/constructs/monitoring.js';
import { METRIC_NAMES, metricsNamespace } from '../../infra/metrics.js';
import { logicalId, SYNTH_TIMEOUT_MS, type SynthesizedGateway, synthGateway } from './synth.js';

const VARIANTS = ['default', 'prod + fixed'] as const;
type Variant = (typeof VARIANTS)[number];
const STAGE_OF: Record<Variant, string> = { default: 'dev', 'prod + fixed': 'prod' };

describe('Alarms', () => {
  const gateways = {} as Record<Variant, SynthesizedGateway>;
  let notifying: SynthesizedGateway;
  beforeAll(() => {
    gateways.default = synthGateway();
    gateways['prod + fixed'] = synthGateway({ stage: 'prod', egress: 'fixed' });
    notifying = synthGateway({ stage: 'prod', egress: 'fixed', alarmEmail: 'ops@example.com' });
  }, SYNTH_TIMEOUT_MS);

  const alarms = (gateway: SynthesizedGateway) =>
    Object.values(gateway.template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
  const dlqs = (gateway: SynthesizedGateway) =>
    gateway.stack.node.findAll().filter((c) => /\/Queues\/[a-z]+-dlq$/.test(c.node.path));
  const customAlarm = (gateway: SynthesizedGateway, variant: Variant, metricName: string) =>
    alarms(gateway).find(
      (a) => a.MetricName === metricName && a.Namespace === metricsNamespace(STAGE_OF[variant]),
    );

  it.each(VARIANTS)('alarms as soon as any DLQ holds a message (%s)', (variant) => {
    const gateway = gateways[variant];
    expect(dlqs(gateway).length).toBeGreaterThan(0);
    for (const dlq of dlqs(gateway)) {
      gateway.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(gateway, dlq), 'QueueName'] } }],
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
      });
    }
  });

  it.each(VARIANTS)('alarms when a dead message waits in its DLQ for days (%s)', (variant) => {
    const gateway = gateways[variant];
    for (const dlq of dlqs(gateway)) {
      gateway.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(gateway, dlq), 'QueueName'] } }],
        Threshold: DLQ_AGE_ALARM_SECONDS,
      });
    }
  });

  it('alarms on a dead webhook (a message in the notify DLQ) and on a status webhook that could not be queued', () => {
    const gateway = gateways.default;
    const notifyDlq = gateway.stack.node.findAll().find((c) => c.node.path.endsWith('/Queues/notify-dlq'));
    expect(notifyDlq).toBeDefined();
    gateway.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        { Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(gateway, notifyDlq as never), 'QueueName'] } },
      ],
      Threshold: 0,
    });
    expect(customAlarm(gateway, 'default', METRIC_NAMES.webhookEnqueueFailed)).toMatchObject({
      Threshold: 0,
    });
  });

  it.each(VARIANTS)("alarms when WeCom refuses a group robot's key: its circuit is open (%s)", (variant) => {
    expect(customAlarm(gateways[variant], variant, METRIC_NAMES.robotConfigError)).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: [expect.anything()],
    });
  });

  it.each(['callback', 'notify'] as const)('alarms on %s errors', (name) => {
    const gateway = gateways.default;
    gateway.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(gateway, gateway.stack[name].fn) } }],
    });
  });

  it.each(VARIANTS)(
    'alarms on the age of the oldest message of each lane and of the notify queue (%s)',
    (variant) => {
      const queueAgeAlarms = alarms(gateways[variant]).filter(
        (a) => a.MetricName === 'ApproximateAgeOfOldestMessage' && a.Threshold !== DLQ_AGE_ALARM_SECONDS,
      );
      expect(queueAgeAlarms.map((a) => a.Threshold).sort((x, y) => x - y)).toEqual([
        LANE_AGE_ALARM_SECONDS.high,
        LANE_AGE_ALARM_SECONDS.normal,
        NOTIFY_AGE_ALARM_SECONDS,
      ]);
    },
  );

  it.each(
    VARIANTS.flatMap((v) => [
      [v, 'Errors'],
      [v, 'Throttles'],
    ]),
  )('alarms on sender %s (%s)', (variant, metricName) => {
    const gateway = gateways[variant as Variant];
    gateway.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: metricName,
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(gateway, gateway.stack.sender.fn) } }],
    });
  });

  it.each(VARIANTS)('alarms on API 5xx responses (%s)', (variant) => {
    gateways[variant].template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
    });
  });

  it.each(
    VARIANTS.flatMap((v) => [
      [v, METRIC_NAMES.rateLimited],
      [v, METRIC_NAMES.dead],
      [v, METRIC_NAMES.configError],
      [v, METRIC_NAMES.configReloadFailed],
    ]),
  )("alarms on the stage's own %s metric, dimensionless, above 0 (%s)", (variant, metricName) => {
    const alarm = customAlarm(gateways[variant as Variant], variant as Variant, metricName as string);
    expect(alarm).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    expect(alarm).not.toHaveProperty('Dimensions');
  });

  it.each(VARIANTS)("alarms on the share of failed messages in the stage's namespace (%s)", (variant) => {
    const [rate] = alarms(gateways[variant]).filter((a) => a.Metrics);
    expect(rate?.Threshold).toBe(FAILED_RATE_ALARM_PERCENT);
    const metrics = rate?.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: unknown } }[];
    expect(metrics.find((m) => m.Expression)?.Expression).toMatch(/failed.*\/.*sent.*failed/);
    const watched = metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []));
    expect(watched).toEqual(
      expect.arrayContaining([
        { Namespace: metricsNamespace(STAGE_OF[variant]), MetricName: METRIC_NAMES.failed },
        { Namespace: metricsNamespace(STAGE_OF[variant]), MetricName: METRIC_NAMES.sent },
      ]),
    );
  });

  it.each(VARIANTS)('hands every function the stage whose namespace the alarms watch (%s)', (variant) => {
    const gateway = gateways[variant];
    for (const fn of [gateway.stack.ingest, gateway.stack.sender]) {
      const props =
        gateway.template.findResources('AWS::Lambda::Function')[logicalId(gateway, fn.fn)]?.Properties;
      expect(props?.Environment.Variables[ENV.stage]).toBe(STAGE_OF[variant]);
    }
    const namespaces = new Set(alarms(gateway).flatMap((a) => (a.Namespace ? [a.Namespace] : [])));
    expect(namespaces).toContain(metricsNamespace(STAGE_OF[variant]));
    expect([...namespaces].filter((n) => n.startsWith('WecomGateway'))).toEqual([
      metricsNamespace(STAGE_OF[variant]),
    ]);
  });

  it.each(VARIANTS)('sends every alarm, and its return to OK, to the alarm topic (%s)', (variant) => {
    const gateway = gateways[variant];
    const [topicId] = Object.keys(gateway.template.findResources('AWS::SNS::Topic'));
    expect(topicId).toBeDefined();
    for (const alarm of alarms(gateway)) {
      expect(alarm.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.OKActions).toEqual([{ Ref: topicId }]);
    }
    gateway.template.hasOutput('AlarmTopicArn', { Value: { Ref: topicId } });
  });

  it('subscribes the alarm email to a TLS-only topic', () => {
    const [topicId] = Object.keys(notifying.template.findResources('AWS::SNS::Topic'));
    notifying.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: topicId },
    });
    notifying.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('warns at synth when prod has no alarm subscriber', () => {
    Annotations.fromStack(gateways['prod + fixed'].stack).hasWarning(
      '*',
      Match.stringLikeRegexp('prod has no alarmEmail'),
    );
  });

  it.each([
    ['dev', () => gateways.default],
    ['prod with alarmEmail', () => notifying],
  ])('does not warn about subscribers for %s', (_name, gateway) => {
    Annotations.fromStack(gateway().stack).hasNoWarning('*', Match.stringLikeRegexp('alarmEmail'));
  });

  it.each(VARIANTS)('builds one dashboard (%s)', (variant) => {
    gateways[variant].template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });
});
