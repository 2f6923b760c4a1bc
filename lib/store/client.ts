import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * One document client per container. The endpoint comes from the standard AWS_ENDPOINT_URL_DYNAMODB variable
 * when set (the local stack), so this code has no local branch. `appId` tags requests in the user agent, which
 * lets the local stack count DynamoDB requests per function.
 */
export function createDocumentClient(
  appId: string,
  config: DynamoDBClientConfig = {},
): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    userAgentAppId: appId,
    maxAttempts: 4,
    // A hung request must fail (and be retried) well inside the function timeout, not outlive it.
    requestHandler: { connectionTimeout: 3_000, requestTimeout: 5_000 },
    ...config,
  });
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

export type DocClient = Pick<DynamoDBDocumentClient, 'send'>;
