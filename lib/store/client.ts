import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  AWS_MAX_ATTEMPTS,
  AWS_REQUEST_HANDLER,
  isAwsUnavailable,
  isConditionFailed,
  isValidationError,
  sendOptions,
} from '#lib/aws/index.js';
import { StoreRejectedError, StoreUnavailableError } from './errors.js';

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
    maxAttempts: AWS_MAX_ATTEMPTS,
    requestHandler: AWS_REQUEST_HANDLER,
    ...config,
  });
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

export type DocClient = Pick<DynamoDBDocumentClient, 'send'>;

/**
 * The client as the adapters use it: an SDK error that means DynamoDB is unavailable arrives as the port's
 * StoreUnavailableError, one that means the request itself is invalid (an item over 400 KB) as StoreRejectedError,
 * so nothing above the adapters sees an SDK error. A failed condition passes through, for {@link conditionalWrite}.
 * Every call ends by the invocation's deadline, if there is one.
 */
export function portClient(db: DocClient): DocClient {
  const send = (command: Parameters<DocClient['send']>[0]) =>
    db.send(command, sendOptions()).catch((err: unknown) => {
      if (isAwsUnavailable(err)) throw new StoreUnavailableError({ cause: err });
      if (isValidationError(err)) throw new StoreRejectedError({ cause: err });
      throw err;
    });
  return { send: send as DocClient['send'] };
}

/**
 * Runs a conditional write: its output, or undefined when its condition did not hold (then nothing was written).
 *
 * @example const applied = (await conditionalWrite(db.send(new PutCommand({ …, ConditionExpression })))) !== undefined;
 */
export async function conditionalWrite<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch (err) {
    if (isConditionFailed(err)) return undefined;
    throw err;
  }
}

/**
 * The item as it stood when a write's condition failed, where the write asked for it
 * (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`): DynamoDB returns it with the error, in its wire format even
 * through the document client, so its numbers and strings are read here. Undefined when there was no item, or when the
 * engine does not return one (dynalite, the local emulator): the caller reads it then.
 */
export function conditionFailureItem(err: unknown): Record<string, unknown> | undefined {
  const item = (err as { Item?: unknown } | undefined)?.Item;
  if (typeof item !== 'object' || item === null) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(item)) {
    const wire = value as { N?: unknown; S?: unknown } | null;
    out[name] = typeof wire?.N === 'string' ? Number(wire.N) : typeof wire?.S === 'string' ? wire.S : value;
  }
  return out;
}
