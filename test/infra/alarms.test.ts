import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { METRIC_NAMES, METRICS_NAMESPACE } from '../../infra/metrics.js';
import { logicalId, SYNTH_TIMEOUT_MS, type SynthesizedGateway, synthGateway } from './synth.js';

describe('Alarms', () => {
  let quiet: SynthesizedGateway;
  let notifying: SynthesizedGateway;
  beforeAll(() => {
    quiet = synthGateway();
    notifying = synthGateway({ alarmEmail: 'ops@example.com' });
  }, SYNTH_TIMEOUT_MS);

  it('alarms as soon as any DLQ holds a message', () => {
    const dlqs = quiet.stack.node.findAll().filter((c) => /\/Queues\/[a-z]+-dlq$/.test(c.node.path));
    expect(dlqs.length).toBeGreaterThan(0);
    for (const dlq of dlqs) {
      quiet.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(quiet, dlq), 'QueueName'] } }],
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
      });
    }
  });

  it('alarms on the age of the oldest message of each lane', () => {
    const ageAlarms = quiet.template.findResources('AWS::CloudWatch::Alarm', {
      Properties: { MetricName: 'ApproximateAgeOfOldestMessage' },
    });
    expect(Object.keys(ageAlarms)).toHaveLength(2);
  });

  it.each(['Errors', 'Throttles'])('alarms on sender %s', (metricName) => {
    quiet.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: metricName,
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(quiet, quiet.stack.sender.fn) } }],
    });
  });

  it('alarms on API 5xx responses', () => {
    quiet.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
    });
  });

  it('alarms when WeCom rate-limits the sender (custom RateLimited metric, no dimensions)', () => {
    quiet.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: METRICS_NAMESPACE,
      MetricName: METRIC_NAMES.rateLimited,
      Dimensions: Match.absent(),
      Threshold: 0,
    });
  });

  it('creates no topic when no alarm email is given', () => {
    quiet.template.resourceCountIs('AWS::SNS::Topic', 0);
  });

  it('notifies the alarm email of every alarm through a TLS-only topic', () => {
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
    for (const alarm of Object.values(notifying.template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
    }
  });

  it('builds one dashboard', () => {
    quiet.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });
});
