import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';

/** Emulators accept any credentials; fixed ones keep the SDK from looking for a profile. */
export const LOCAL_CLIENT_CONFIG = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
} as const;

/** `maxAttempts: 1` turns the SDK's retries off, to see an outage as it is. */
export const localSqsClient = (endpoint: string, extra: { maxAttempts?: number } = {}): SQSClient =>
  new SQSClient({ ...LOCAL_CLIENT_CONFIG, endpoint, ...extra });

export const localDynamoClient = (endpoint: string, extra: { maxAttempts?: number } = {}): DynamoDBClient =>
  new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint, ...extra });

/** Polls `probe` until it returns a value other than undefined/false; fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 10_000, intervalMs = 25, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}
