import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { MessageRecord } from '#lib/model/index.js';
import { createDocumentClient, type DocClient } from '#lib/store/index.js';
import { startDynamo, startSqs } from '#local/emulators.js';
import { provision } from '#local/provision.js';
import { localSqsClient } from './local-clients.js';

/** Emulators accept any credentials; fixed ones keep the SDK from looking for a profile. */
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const region = 'us-east-1';

export interface UnitTable {
  readonly db: DocClient;
  readonly tableName: string;
  stop(): Promise<void>;
}

/**
 * dynalite in-process on a random loopback port with the gateway's table, provisioned from the same
 * definitions as the CDK stack (provision also creates the queues, so a throwaway fauxqs runs too).
 */
export async function startUnitTable(): Promise<UnitTable> {
  const dynamo = await startDynamo();
  const sqs = await startSqs();
  const dynamoClient = new DynamoDBClient({ endpoint: dynamo.endpoint, region, credentials });
  const sqsClient = localSqsClient(sqs.endpoint);
  const { tableName } = await provision({ dynamo: dynamoClient, sqs: sqsClient });
  dynamoClient.destroy();
  sqsClient.destroy();
  await sqs.stop();
  const client = createDocumentClient('test', { endpoint: dynamo.endpoint, region, credentials });
  return {
    db: client,
    tableName,
    stop: async () => {
      client.destroy();
      await dynamo.stop();
    },
  };
}

/** A unique id per call, so tests sharing one table never see each other's items. */
export const uniqueId = (prefix = 'msg'): string => `${prefix}_${randomUUID()}`;

/** A message record as ingest writes it (status queued, no attempts yet). */
export function messageRecord(overrides: Partial<MessageRecord> = {}): MessageRecord {
  const at = '2026-12-01T08:00:00.000Z';
  return {
    id: uniqueId(),
    app: 'ops',
    status: 'queued',
    priority: 'normal',
    attempts: 0,
    createdAt: at,
    updatedAt: at,
    apiKey: 'ci',
    request: {
      app: 'ops',
      priority: 'normal',
      recipients: { touser: ['alice'], toparty: [], totag: [] },
      msgtype: 'text',
      content: { content: 'disk full on db-1' },
      options: {},
    },
    generation: 0,
    expiresAt: 4_102_444_800, // 2100-01-01
    ...overrides,
  };
}
