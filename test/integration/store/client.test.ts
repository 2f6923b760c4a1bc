import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient, DynamoMessageStore, keys, StoreUnavailableError } from '#lib/store/index.js';
import { closedEndpoint } from '#test/helpers/closed-port.js';
import { messageRecord, startUnitTable, type UnitTable } from '#test/helpers/unit-dynamo.js';

describe('the store adapters and DynamoDB errors (dynalite)', () => {
  let table: UnitTable;
  beforeAll(async () => {
    table = await startUnitTable();
  });
  afterAll(async () => {
    await table.stop();
  });

  it('raise StoreUnavailableError, with the SDK error as its cause, when DynamoDB cannot be reached', async () => {
    const db = createDocumentClient('test', {
      endpoint: await closedEndpoint(),
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    const store = new DynamoMessageStore(db, table.tableName);
    try {
      const err = await store.get('msg_1').catch((e: unknown) => e);

      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect((err as Error).cause).toMatchObject({ code: 'ECONNREFUSED', $metadata: expect.any(Object) });
    } finally {
      db.destroy();
    }
  });

  it('pass an error the request itself caused through as it is (it becomes a 500, not a retry)', async () => {
    const store = new DynamoMessageStore(table.db, 'no-such-table');

    const err = await store.get('msg_1').catch((e: unknown) => e);

    expect(err).not.toBeInstanceOf(StoreUnavailableError);
    expect(err).toMatchObject({ name: 'ResourceNotFoundException' });
  });

  it('answer a failed condition as an outcome, not an error', async () => {
    const store = new DynamoMessageStore(table.db, table.tableName);
    const record = messageRecord();
    await table.db.send(new PutCommand({ TableName: table.tableName, Item: keys.message(record.id) }));

    expect(await store.create(record)).toBe('exists');
    expect(await store.claimCopy('msg_missing', 1)).toBe(false);
    const raw = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: keys.message(record.id) }),
    );
    expect(raw.Item).not.toHaveProperty('status');
  });
});
