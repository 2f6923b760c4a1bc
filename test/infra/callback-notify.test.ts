import { beforeAll, describe, expect, it } from 'vitest';
import {
  FUNCTIONS,
  NOTIFY_EVENT_SOURCE,
  NOTIFY_MAX_RECEIVE_COUNT,
  QUEUES,
  TABLE,
} from '#lib/resources/index.js';
import { DEFAULT_WEBHOOK_RETRY } from '#lib/webhooks/index.js';
import { logicalId, SYNTH_TIMEOUT_MS, type SynthesizedGateway, synthGateway } from './synth.js';

describe('Callback and notify functions', () => {
  let gateway: SynthesizedGateway;
  let fixed: SynthesizedGateway;
  beforeAll(() => {
    gateway = synthGateway();
    fixed = synthGateway({ egress: 'fixed' });
  }, SYNTH_TIMEOUT_MS);

  const functionOf = (g: SynthesizedGateway, name: 'callback' | 'notify' | 'sender') =>
    g.template.findResources('AWS::Lambda::Function')[logicalId(g, g.stack[name].fn)];

  it('answers WeCom within its 5 s: the callback function times out at 5 s', () => {
    expect(functionOf(gateway, 'callback')?.Properties.Timeout).toBe(FUNCTIONS.callback.timeoutSeconds);
    expect(FUNCTIONS.callback.timeoutSeconds).toBeLessThanOrEqual(5);
  });

  it('consumes the notify queue with partial batch responses, batch size and maxConcurrency from lib/resources', () => {
    const notifyRef = { Ref: logicalId(gateway, gateway.stack.notify.fn) };
    const mappings = Object.values(gateway.template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (m) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify(notifyRef),
    );

    expect(mappings).toHaveLength(1);
    expect(mappings[0]?.Properties).toMatchObject({
      BatchSize: NOTIFY_EVENT_SOURCE.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: NOTIFY_EVENT_SOURCE.maxConcurrency },
      EventSourceArn: { 'Fn::GetAtt': [expect.stringMatching(/^Queuesnotify[0-9A-F]/), 'Arn'] },
    });
  });

  it('redrives a notify job only after more receives than the webhook retry schedule ever makes', () => {
    expect(NOTIFY_MAX_RECEIVE_COUNT).toBeGreaterThan(DEFAULT_WEBHOOK_RETRY.maxAttempts);
    expect(QUEUES.notify.deadLetter.maxReceiveCount).toBe(NOTIFY_MAX_RECEIVE_COUNT);
    // Retries last ≥ 24 h: the queue must keep a job longer than that.
    expect(QUEUES.notify.retentionSeconds).toBeGreaterThan(DEFAULT_WEBHOOK_RETRY.maxAgeSeconds + 2 * 3600);
    const queues = gateway.template.findResources('AWS::SQS::Queue');
    const notify = Object.entries(queues).find(([id]) => /^Queuesnotify[0-9A-F]/.test(id))?.[1];
    expect(notify?.Properties.RedrivePolicy.maxReceiveCount).toBe(NOTIFY_MAX_RECEIVE_COUNT);
  });

  it('keeps notify out of the VPC even with fixed egress: it must reach the businesses on the internet', () => {
    expect(functionOf(fixed, 'notify')?.Properties).not.toHaveProperty('VpcConfig');
    expect(functionOf(fixed, 'sender')?.Properties).toHaveProperty('VpcConfig');
  });

  it('indexes template-card records by task key (keys only) and WeCom events by app and arrival (all)', () => {
    const [table] = Object.values(gateway.template.findResources('AWS::DynamoDB::GlobalTable'));
    const index = (i: typeof TABLE.taskIndex | typeof TABLE.feedIndex, projection: string) => ({
      IndexName: i.name,
      KeySchema: [
        { AttributeName: i.partitionKey, KeyType: 'HASH' },
        { AttributeName: i.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: projection },
    });
    const indexes = table?.Properties.GlobalSecondaryIndexes as { IndexName: string }[];
    expect(
      indexes.filter((i) => [TABLE.taskIndex.name, TABLE.feedIndex.name].includes(i.IndexName as never)),
    ).toEqual([index(TABLE.taskIndex, 'KEYS_ONLY'), index(TABLE.feedIndex, 'ALL')]);
  });
});
