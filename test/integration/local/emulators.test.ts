import { ListTablesCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { isJavaAvailable, startDynamo, startSqs } from '#local/emulators.js';
import { provision } from '#local/provision.js';
import { localDynamoClient, localSqsClient } from '#test/helpers/local-clients.js';

const javaAvailable = await isJavaAvailable();

describe('startDynamo', () => {
  it('serves dynalite on a random loopback port and releases it on stop', async () => {
    const dynamo = await startDynamo();
    const client = localDynamoClient(dynamo.endpoint);

    expect(dynamo.engine).toBe('dynalite');
    expect(dynamo.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await client.send(new ListTablesCommand({}))).toMatchObject({ TableNames: [] });

    await dynamo.stop();
    await expect(client.send(new ListTablesCommand({}))).rejects.toThrow();
    client.destroy();
  });

  it.runIf(javaAvailable)(
    'runs DynamoDB Local with transactions and the TTL API, and kills the JVM on stop',
    { timeout: 60_000 },
    async () => {
      const dynamo = await startDynamo({ engine: 'dynamodb-local' });
      const client = localDynamoClient(dynamo.endpoint);
      const sqs = await startSqs();
      const sqsClient = localSqsClient(sqs.endpoint);
      try {
        const { tableName, ttlEnabled } = await provision({ dynamo: client, sqs: sqsClient });
        await client.send(
          new TransactWriteItemsCommand({
            TransactItems: [{ Put: { TableName: tableName, Item: { pk: { S: 'a' }, sk: { S: 'b' } } } }],
          }),
        );

        expect(dynamo.engine).toBe('dynamodb-local');
        expect(ttlEnabled).toBe(true);
        expect(dynamo.pid).toBeTypeOf('number');
      } finally {
        await dynamo.stop();
        await sqs.stop();
        client.destroy();
        sqsClient.destroy();
      }
      // Signal 0 only checks that the process exists.
      expect(() => process.kill(dynamo.pid ?? -1, 0)).toThrow(/ESRCH/);
    },
  );
});

describe('emulator restart (fault injection)', () => {
  it('takes dynalite down and brings it back on the same endpoint with its tables', async () => {
    const dynamo = await startDynamo();
    const client = localDynamoClient(dynamo.endpoint, { maxAttempts: 1 });
    try {
      const sqs = await startSqs();
      const sqsClient = localSqsClient(sqs.endpoint);
      const { tableName } = await provision({ dynamo: client, sqs: sqsClient });
      await sqs.stop();
      sqsClient.destroy();

      const restarting = dynamo.restart(500);
      await new Promise((r) => setTimeout(r, 100));
      await expect(client.send(new ListTablesCommand({}))).rejects.toThrow(/ECONNREFUSED/);
      await restarting;

      expect((await client.send(new ListTablesCommand({}))).TableNames).toEqual([tableName]);
    } finally {
      await dynamo.stop();
      client.destroy();
    }
  });

  it('does not come back when stopped during a restart', async () => {
    const dynamo = await startDynamo();
    const sqs = await startSqs();
    const dynamoClient = localDynamoClient(dynamo.endpoint, { maxAttempts: 1 });
    const sqsClient = localSqsClient(sqs.endpoint, { maxAttempts: 1 });
    try {
      const restarts = [dynamo.restart(300), sqs.restart(300)].map((r) => r.catch(() => undefined));
      await new Promise((r) => setTimeout(r, 50));
      await Promise.all([dynamo.stop(), sqs.stop()]);
      await Promise.all(restarts);
      await new Promise((r) => setTimeout(r, 100));

      await expect(dynamoClient.send(new ListTablesCommand({}))).rejects.toThrow(/ECONNREFUSED/);
      await expect(sqsClient.send(new CreateQueueCommand({ QueueName: 'after-stop' }))).rejects.toThrow(
        /ECONNREFUSED/,
      );
      await expect(dynamo.restart(10)).rejects.toThrow('stopped');
    } finally {
      dynamoClient.destroy();
      sqsClient.destroy();
    }
  });

  it('takes fauxqs down and brings it back with its queued messages', async () => {
    const sqs = await startSqs();
    const client = localSqsClient(sqs.endpoint, { maxAttempts: 1 });
    try {
      const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: 'restart-test' }));
      await client.send(new SendMessageCommand({ QueueUrl, MessageBody: 'survives' }));

      const restarting = sqs.restart(500);
      await new Promise((r) => setTimeout(r, 100));
      await expect(
        client.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] })),
      ).rejects.toThrow(/ECONNREFUSED/);
      await restarting;

      const { Messages } = await client.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
      expect(Messages?.map((m) => m.Body)).toEqual(['survives']);
    } finally {
      await sqs.stop();
      client.destroy();
    }
  });
});

describe('isJavaAvailable', () => {
  it('answers with a boolean', async () => {
    expect(typeof (await isJavaAvailable())).toBe('boolean');
  });
});

describe('startSqs', () => {
  it('serves fauxqs on a random loopback port', async () => {
    const sqs = await startSqs();
    const client = localSqsClient(sqs.endpoint);
    try {
      const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: 'q' }));

      expect(sqs.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(QueueUrl).toMatch(/\/000000000000\/q$/);
    } finally {
      await sqs.stop();
      client.destroy();
    }
  });
});
