// The callback's bare PutItem receiver in the form the gateway's HTTP functions run in: a Lambda handler, served by
// children/api-shim.ts (the local API Gateway stand-in) exactly as a bundled function is. Its process then does the
// stand-in's HTTP and event building too, which API Gateway does outside Lambda, so the callback's CPU ÷ this
// baseline's compares the functions' own work. One conditional PutItem of the body with a default client, keyed by
// the body's hash: a request WeCom retries (the same signed body) fails the condition, as the callback's dedupe
// claim does, and is answered as stored. Answered with the callback function's empty 200.
import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';

const tableName = process.env.TABLE_NAME;
if (!tableName) throw new Error('TABLE_NAME must be set');
const db = new DynamoDBClient({ endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB });

export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyResultV2> => {
  const body = event.body
    ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8').toString()
    : '';
  const key = createHash('sha256').update(body).digest('base64url');
  await db
    .send(
      new PutItemCommand({
        TableName: tableName,
        Item: { pk: { S: `BENCH#${key}` }, sk: { S: 'MSG' }, body: { S: body } },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    )
    .catch((err: unknown) => {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    });
  return { statusCode: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: '' };
};
