import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RECEIVE_COUNT, QUEUES, TABLE } from '#lib/resources/index.js';
import { type DynamoEmulator, type SqsEmulator, startDynamo, startSqs } from '#local/emulators.js';
import { provision } from '#local/provision.js';
import { localDynamoClient, localSqsClient } from '#test/helpers/local-clients.js';

describe('provision', () => {
  let dynamoEmulator: DynamoEmulator;
  let sqsEmulator: SqsEmulator;
  let clients: { dynamo: ReturnType<typeof localDynamoClient>; sqs: ReturnType<typeof localSqsClient> };

  beforeAll(async () => {
    [dynamoEmulator, sqsEmulator] = await Promise.all([startDynamo(), startSqs()]);
    clients = {
      dynamo: localDynamoClient(dynamoEmulator.endpoint),
      sqs: localSqsClient(sqsEmulator.endpoint),
    };
  });

  afterAll(async () => {
    clients.dynamo.destroy();
    clients.sqs.destroy();
    await Promise.all([dynamoEmulator.stop(), sqsEmulator.stop()]);
  });

  it('creates the table with string pk/sk keys and on-demand billing', async () => {
    const { tableName } = await provision(clients);

    const { Table } = await clients.dynamo.send(new DescribeTableCommand({ TableName: tableName }));
    expect(tableName).toBe(TABLE.localName);
    expect(Table?.TableStatus).toBe('ACTIVE');
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
  });

  it('creates every queue with its visibility timeout, retention and redrive policy', async () => {
    const { queueUrls, queueArns } = await provision(clients);

    expect(Object.keys(queueUrls).sort()).toEqual(Object.keys(QUEUES).sort());
    for (const lane of ['high', 'normal'] as const) {
      const { Attributes } = await clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: queueUrls[lane], AttributeNames: ['All'] }),
      );
      expect(Attributes?.VisibilityTimeout).toBe(String(QUEUES[lane].visibilityTimeoutSeconds));
      expect(Attributes?.MessageRetentionPeriod).toBe(String(QUEUES[lane].retentionSeconds));
      expect(JSON.parse(Attributes?.RedrivePolicy ?? '{}')).toEqual({
        deadLetterTargetArn: queueArns[`${lane}-dlq`],
        maxReceiveCount: MAX_RECEIVE_COUNT,
      });
    }
  });

  it('returns the same resources when run again and repairs drifted queue attributes', async () => {
    const first = await provision(clients);
    await clients.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: first.queueUrls.high,
        Attributes: { VisibilityTimeout: '5' },
      }),
    );

    const second = await provision(clients);

    expect(second).toEqual(first);
    const { Attributes } = await clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: first.queueUrls.high,
        AttributeNames: ['VisibilityTimeout'],
      }),
    );
    expect(Attributes?.VisibilityTimeout).toBe(String(QUEUES.high.visibilityTimeoutSeconds));
  });

  it('hands out queue URLs on the emulator endpoint, which resolve without *.localhost DNS', async () => {
    const { queueUrls } = await provision(clients);

    expect(queueUrls.high).toBe(`${sqsEmulator.endpoint}/000000000000/wecom-gateway-high`);
  });

  it('reports that dynalite has no TTL API instead of failing', async () => {
    const { ttlEnabled } = await provision(clients);

    expect(ttlEnabled).toBe(false);
  });
});
