import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient, type DocClient } from '#lib/store/index.js';
import { startDynamo, startSqs } from '#local/emulators.js';
import { provision } from '#local/provision.js';
import { localSqsClient } from './local-clients.js';

// The record factories live in a module of their own, so unit tests can use them without loading the emulators.
export { messageRecord, uniqueId } from './message-records.js';

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
 * definitions as the CDK stack (provision also creates the queues, so a throwaway fauxqs runs too). With
 * DYNAMO_ENGINE=dynamodb-local (the DynamoDB Local pass of `npm test`, scripts/test-dynamodb-local.ts) AWS's
 * DynamoDB Local instead, as test/helpers/gateway.ts does for the whole stack.
 */
export async function startUnitTable(): Promise<UnitTable> {
  const dynamo = await startDynamo(
    process.env.DYNAMO_ENGINE === 'dynamodb-local' ? { engine: 'dynamodb-local' } : {},
  );
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
