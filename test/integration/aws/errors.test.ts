import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { isAwsUnavailable } from '#lib/aws/index.js';
import { closedEndpoint, silentEndpoint } from '#test/helpers/closed-port.js';
import { localDynamoClient } from '#test/helpers/local-clients.js';

/** The error the real SDK raises for DynamoDB down: connection refused (no HTTP answer), after its retries. */
async function refusedError(): Promise<unknown> {
  const db = localDynamoClient(await closedEndpoint(), { maxAttempts: 1 });
  try {
    return await db.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } })).then(
      () => expect.fail('an endpoint where nothing listens answered'),
      (err: unknown) => err,
    );
  } finally {
    db.destroy();
  }
}

describe('isAwsUnavailable', () => {
  it('is true for a service that cannot be reached (the SDK error of a refused connection)', async () => {
    expect(isAwsUnavailable(await refusedError())).toBe(true);
  });

  it("is true for a call the invocation's deadline cut, before its first attempt or during one", async () => {
    const silent = await silentEndpoint();
    const db = localDynamoClient(silent.endpoint);
    const get = (abortSignal: AbortSignal) =>
      db.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } }), { abortSignal }).then(
        () => expect.fail('a silent endpoint answered'),
        (err: unknown) => err,
      );
    try {
      expect(isAwsUnavailable(await get(AbortSignal.abort()))).toBe(true);
      expect(isAwsUnavailable(await get(AbortSignal.timeout(200)))).toBe(true);
    } finally {
      db.destroy();
      await silent.close();
    }
  });
});
