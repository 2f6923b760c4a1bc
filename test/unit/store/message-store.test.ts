import { BatchWriteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoMessageStore, keys } from '#lib/store/index.js';
import { messageRecord, startUnitTable, type UnitTable } from '#test/helpers/unit-dynamo.js';

describe('DynamoMessageStore (dynalite)', () => {
  let table: UnitTable;
  let store: DynamoMessageStore;
  const nowMs = Date.parse('2026-12-01T08:00:00Z');

  beforeAll(async () => {
    table = await startUnitTable();
    store = new DynamoMessageStore(table.db, table.tableName, () => nowMs);
  });
  afterAll(async () => {
    await table.stop();
  });

  const rawItem = async (id: string) =>
    (await table.db.send(new GetCommand({ TableName: table.tableName, Key: keys.message(id) }))).Item;

  it('creates a record that get returns without its keys', async () => {
    const record = messageRecord();

    await store.create(record);

    expect(await store.get(record.id)).toEqual(record);
  });

  it('refuses a second create of the same id with ConditionalCheckFailedException', async () => {
    const record = messageRecord();
    await store.create(record);

    const second = store.create({ ...record, status: 'sent' });

    await expect(second).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect((await store.get(record.id))?.status).toBe('queued');
  });

  it('returns undefined for an unknown id', async () => {
    expect(await store.get('msg_missing')).toBeUndefined();
  });

  it('treats a record past its expiresAt as absent', async () => {
    const record = messageRecord({ expiresAt: Math.floor(nowMs / 1000) - 1 });
    await store.create(record);

    expect(await store.get(record.id)).toBeUndefined();
    expect(await rawItem(record.id)).toBeDefined();
  });

  it('moves the status when the current one is listed in `from`', async () => {
    const record = messageRecord();
    await store.create(record);

    const moved = await store.transition(record.id, {
      from: ['queued', 'deferred'],
      to: 'sent',
      at: '2026-12-01T08:00:01.000Z',
      sentAt: '2026-12-01T08:00:01.000Z',
      wecom: { msgid: 'MSGID1', invaliduser: 'ghost' },
    });

    expect(moved).toBe(true);
    expect(await store.get(record.id)).toMatchObject({
      status: 'sent',
      updatedAt: '2026-12-01T08:00:01.000Z',
      sentAt: '2026-12-01T08:00:01.000Z',
      wecom: { msgid: 'MSGID1', invaliduser: 'ghost' },
    });
  });

  it('returns false and changes nothing when the current status is not in `from`', async () => {
    const record = messageRecord({ status: 'sent' });
    await store.create(record);

    const moved = await store.transition(record.id, { from: ['queued'], to: 'failed', at: 'later' });

    expect(moved).toBe(false);
    expect(await store.get(record.id)).toEqual(record);
  });

  it('returns false for a record that does not exist, without creating it', async () => {
    const moved = await store.transition('msg_nobody', { from: ['queued'], to: 'sent', at: 'now' });

    expect(moved).toBe(false);
    expect(await rawItem('msg_nobody')).toBeUndefined();
  });

  it('appends events in order, starting from a record without events', async () => {
    const record = messageRecord();
    await store.create(record);

    await store.transition(record.id, {
      from: ['queued'],
      to: 'deferred',
      at: 't1',
      event: { at: 't1', type: 'deferred', detail: 'member-minute' },
    });
    await store.transition(record.id, {
      from: ['deferred'],
      to: 'queued',
      at: 't2',
      event: { at: 't2', type: 'requeued' },
    });

    expect((await store.get(record.id))?.events).toEqual([
      { at: 't1', type: 'deferred', detail: 'member-minute' },
      { at: 't2', type: 'requeued' },
    ]);
  });

  it('adds attemptsDelta to the stored attempts', async () => {
    const record = messageRecord({ attempts: 1 });
    await store.create(record);

    await store.transition(record.id, { from: ['queued'], to: 'queued', at: 't1', attemptsDelta: 1 });
    await store.transition(record.id, { from: ['queued'], to: 'queued', at: 't2', attemptsDelta: 2 });

    expect((await store.get(record.id))?.attempts).toBe(4);
  });

  it('sets lastAttemptReachedWecom=false when the attempt did not reach WeCom and removes it when unknown', async () => {
    const record = messageRecord();
    await store.create(record);

    await store.transition(record.id, { from: ['queued'], to: 'queued', at: 't1', notReachedWecom: true });
    const afterNotReached = await store.get(record.id);
    await store.transition(record.id, { from: ['queued'], to: 'queued', at: 't2', notReachedWecom: false });
    const afterUnknown = await store.get(record.id);

    expect(afterNotReached?.lastAttemptReachedWecom).toBe(false);
    expect(afterUnknown).not.toHaveProperty('lastAttemptReachedWecom');
  });

  it('records the error and the generation of a failed attempt', async () => {
    const record = messageRecord();
    await store.create(record);

    await store.transition(record.id, {
      from: ['queued'],
      to: 'failed',
      at: 't1',
      error: { code: 'wecom_permanent', message: 'invalid user', wecom_errcode: 81013 },
      generation: 3,
    });

    expect(await store.get(record.id)).toMatchObject({
      status: 'failed',
      generation: 3,
      error: { code: 'wecom_permanent', message: 'invalid user', wecom_errcode: 81013 },
    });
  });

  it('creates a batch of 60 records in three BatchWriteItem requests', async () => {
    const requests: string[] = [];
    const counting = {
      send: (command: { constructor: { name: string } }) => {
        requests.push(command.constructor.name);
        return table.db.send(command as never);
      },
    };
    const batchStore = new DynamoMessageStore(counting as never, table.tableName, () => nowMs);
    const records = Array.from({ length: 60 }, () => messageRecord());

    expect(await batchStore.createBatch(records)).toEqual([]);

    expect(requests).toEqual(['BatchWriteCommand', 'BatchWriteCommand', 'BatchWriteCommand']);
    expect(await Promise.all(records.map((r) => store.get(r.id)))).toEqual(records);
  });

  it('retries unprocessed items and reports a failed chunk as not written, the rest as written', async () => {
    let calls = 0;
    const flaky = {
      send: async (command: BatchWriteCommand) => {
        calls++;
        const items = command.input.RequestItems?.[table.tableName] ?? [];
        const first = items[0]?.PutRequest?.Item as { id: string } | undefined;
        if (first?.id === 'fails') throw new Error('throttled for good');
        // The first answer leaves one item unprocessed, as DynamoDB does under throttling.
        if (calls === 1) {
          await table.db.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: items.slice(1) } }));
          return { UnprocessedItems: { [table.tableName]: items.slice(0, 1) } };
        }
        return table.db.send(command);
      },
    };
    const batchStore = new DynamoMessageStore(flaky as never, table.tableName, () => nowMs);
    const good = Array.from({ length: 25 }, () => messageRecord());
    const bad = [{ ...messageRecord(), id: 'fails' }, messageRecord()];

    const notWritten = await batchStore.createBatch([...good, ...bad]);

    expect(notWritten.sort()).toEqual(bad.map((r) => r.id).sort());
    expect(await Promise.all(good.map((r) => store.get(r.id)))).toEqual(good);
    await expect(batchStore.createBatch(bad)).rejects.toThrow('throttled for good');
  });

  it('writes every record of a sent batch, over several BatchWriteItem chunks', async () => {
    const records = Array.from({ length: 30 }, (_, i) =>
      messageRecord({ status: 'sent', sentAt: 't1', wecom: { msgid: `M${i}` } }),
    );

    const failed = await store.putSentBatch(records);

    expect(failed).toEqual([]);
    const stored = await Promise.all(records.map((r) => store.get(r.id)));
    expect(stored).toEqual(records);
  });

  it('overwrites the queued record with its sent version', async () => {
    const record = messageRecord();
    await store.create(record);

    await store.putSentBatch([{ ...record, status: 'sent', sentAt: 't1', wecom: { msgid: 'M1' } }]);

    expect(await store.get(record.id)).toMatchObject({ status: 'sent', wecom: { msgid: 'M1' } });
  });
});
