/**
 * Creates the gateway's table and queues in the emulators from the shared definitions in
 * lib/resources, the same definitions the CDK stack deploys. Safe to run again against a stack that
 * already has them.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type QueueAttributeName,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import {
  localQueueName,
  projectionOf,
  QUEUES,
  type QueueDefinition,
  type QueueId,
  TABLE,
  TABLE_INDEXES,
} from '#lib/resources/index.js';

export interface ProvisionClients {
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
}

export interface ProvisionedResources {
  readonly tableName: string;
  readonly queueUrls: Record<QueueId, string>;
  readonly queueArns: Record<QueueId, string>;
  /** False when the emulator has no TTL API (dynalite): items then never expire locally. */
  readonly ttlEnabled: boolean;
}

const TABLE_ACTIVE_TIMEOUT_MS = 30_000;

/**
 * Creates (or confirms) the table and every queue.
 *
 * @example
 * const { queueUrls } = await provision({ dynamo, sqs });
 * await sqs.send(new SendMessageCommand({ QueueUrl: queueUrls.high, MessageBody: '{}' }));
 */
export async function provision(clients: ProvisionClients): Promise<ProvisionedResources> {
  const tableName = TABLE.localName;
  await ensureTable(clients.dynamo, tableName);
  const ttlEnabled = await ensureTtl(clients.dynamo, tableName);
  const { queueUrls, queueArns } = await ensureQueues(clients.sqs);
  return { tableName, queueUrls, queueArns, ttlEnabled };
}

// Two indexes may share a sort key (byApp and byRecipient both sort by `listSort`): each attribute is defined once.
const ATTRIBUTES = [
  ...new Set([
    TABLE.partitionKey,
    TABLE.sortKey,
    ...TABLE_INDEXES.flatMap((i) => [i.partitionKey, i.sortKey]),
  ]),
].map((name) => ({ AttributeName: name, AttributeType: 'S' as const }));

/** The table's indexes (lib/resources `TABLE_INDEXES`), as the CDK table defines them. */
const INDEXES: GlobalSecondaryIndex[] = TABLE_INDEXES.map((index) => {
  const projection = projectionOf(index);
  return {
    IndexName: index.name,
    KeySchema: [
      { AttributeName: index.partitionKey, KeyType: 'HASH' },
      { AttributeName: index.sortKey, KeyType: 'RANGE' },
    ],
    Projection: {
      ProjectionType: projection.type,
      ...(projection.nonKeyAttributes ? { NonKeyAttributes: [...projection.nonKeyAttributes] } : {}),
    },
  };
});

async function ensureTable(dynamo: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await dynamo.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: ATTRIBUTES,
        KeySchema: [
          { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: INDEXES,
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (err) {
    if (errorName(err) !== 'ResourceInUseException') throw err;
  }
  const table = await waitActive(dynamo, tableName);
  // A table made by an older version (a restartable DynamoDB Local keeps its data) lacks an index: add it, one per
  // UpdateTable as DynamoDB requires.
  for (const index of INDEXES) {
    if (table.GlobalSecondaryIndexes?.some((i) => i.IndexName === index.IndexName)) continue;
    await dynamo.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: ATTRIBUTES,
        GlobalSecondaryIndexUpdates: [{ Create: index }],
      }),
    );
    await waitActive(dynamo, tableName);
  }
}

/** The table once it and its indexes are ACTIVE. */
async function waitActive(dynamo: DynamoDBClient, tableName: string) {
  // The SDK's waitUntilTableExists polls every 20 s at first; emulators are ready in milliseconds.
  const deadline = Date.now() + TABLE_ACTIVE_TIMEOUT_MS;
  for (;;) {
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
    const indexesActive = (Table?.GlobalSecondaryIndexes ?? []).every(
      (i) => i.IndexStatus === undefined || i.IndexStatus === 'ACTIVE',
    );
    if (Table?.TableStatus === 'ACTIVE' && indexesActive) return Table;
    if (Date.now() > deadline)
      throw new Error(`table ${tableName} not ACTIVE after ${TABLE_ACTIVE_TIMEOUT_MS} ms`);
    await sleep(25);
  }
}

/** Emulators without the TTL API answer with this (dynalite). */
const UNSUPPORTED_OPERATION = new Set(['UnknownOperationException', 'UnrecognizedClientException']);

async function ensureTtl(dynamo: DynamoDBClient, tableName: string): Promise<boolean> {
  try {
    // UpdateTimeToLive fails with ValidationException if TTL is already enabled, so look first
    // (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTimeToLive.html).
    const { TimeToLiveDescription: ttl } = await dynamo.send(
      new DescribeTimeToLiveCommand({ TableName: tableName }),
    );
    if (ttl?.TimeToLiveStatus === 'ENABLED' || ttl?.TimeToLiveStatus === 'ENABLING') return true;
    await dynamo.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      }),
    );
    return true;
  } catch (err) {
    if (UNSUPPORTED_OPERATION.has(errorName(err))) return false;
    throw err;
  }
}

async function ensureQueues(sqs: SQSClient): Promise<Pick<ProvisionedResources, 'queueUrls' | 'queueArns'>> {
  const queueUrls: Partial<Record<QueueId, string>> = {};
  const queueArns: Partial<Record<QueueId, string>> = {};
  const definitions: QueueDefinition[] = Object.values(QUEUES);
  // A redrive policy names its DLQ by ARN, so the DLQs must exist first.
  const ordered = [...definitions.filter((q) => !q.deadLetter), ...definitions.filter((q) => q.deadLetter)];
  for (const queue of ordered) {
    const id = queue.id as QueueId;
    const attributes = queueAttributes(queue, queueArns);
    const url = await onClientEndpoint(sqs, await ensureQueue(sqs, localQueueName(id), attributes));
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
    );
    const arn = Attributes?.QueueArn;
    if (!arn) throw new Error(`queue ${id} has no QueueArn`);
    queueUrls[id] = url;
    queueArns[id] = arn;
  }
  return {
    queueUrls: queueUrls as Record<QueueId, string>,
    queueArns: queueArns as Record<QueueId, string>,
  };
}

/**
 * fauxqs returns AWS-style queue URLs (`http://sqs.us-east-1.localhost:PORT/000000000000/name`), and
 * `*.localhost` does not resolve everywhere. The SDK sends SQS requests to the queue URL's host
 * (`useQueueUrlAsEndpoint`) unless the endpoint was configured on the client itself, so a handler
 * configured through AWS_ENDPOINT_URL_SQS would dial that name. The emulator serves the same queue
 * path on the endpoint we provisioned through, so hand out that URL instead.
 */
async function onClientEndpoint(sqs: SQSClient, queueUrl: string): Promise<string> {
  const endpoint = await sqs.config.endpoint?.();
  if (!endpoint) return queueUrl;
  const port = endpoint.port ? `:${endpoint.port}` : '';
  const protocol = endpoint.protocol.endsWith(':') ? endpoint.protocol : `${endpoint.protocol}:`;
  return `${protocol}//${endpoint.hostname}${port}${new URL(queueUrl).pathname}`;
}

function queueAttributes(
  queue: QueueDefinition,
  arns: Partial<Record<QueueId, string>>,
): Partial<Record<QueueAttributeName, string>> {
  const attributes: Partial<Record<QueueAttributeName, string>> = {
    VisibilityTimeout: String(queue.visibilityTimeoutSeconds),
    MessageRetentionPeriod: String(queue.retentionSeconds),
    MaximumMessageSize: String(queue.maximumMessageBytes),
  };
  if (queue.deadLetter) {
    const deadLetterTargetArn = arns[queue.deadLetter.queueId as QueueId];
    if (!deadLetterTargetArn)
      throw new Error(`DLQ ${queue.deadLetter.queueId} of ${queue.id} is not defined`);
    // https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html
    attributes.RedrivePolicy = JSON.stringify({
      deadLetterTargetArn,
      maxReceiveCount: queue.deadLetter.maxReceiveCount,
    });
  }
  return attributes;
}

async function ensureQueue(
  sqs: SQSClient,
  name: string,
  attributes: Partial<Record<QueueAttributeName, string>>,
): Promise<string> {
  try {
    // CreateQueue returns the existing queue's URL when the attributes match.
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    if (!QueueUrl) throw new Error(`CreateQueue ${name} returned no QueueUrl`);
    return QueueUrl;
  } catch (err) {
    // The queue exists with other attributes (a definition changed): bring it up to date.
    if (errorName(err) !== 'QueueNameExists') throw err;
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    if (!QueueUrl) throw new Error(`GetQueueUrl ${name} returned no QueueUrl`, { cause: err });
    await sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: attributes }));
    return QueueUrl;
  }
}

/**
 * The error's code without namespace: emulators may answer with the SQS query-protocol code
 * (`AWS.SimpleQueueService.QueueNameExists`), which the SDK then uses as the error's name.
 */
function errorName(err: unknown): string {
  return err instanceof Error ? err.name.replace(/^.*[.#]/, '') : '';
}
