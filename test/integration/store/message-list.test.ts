import { BatchWriteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '#lib/messages/index.js';
import { changes, type MessageRecord } from '#lib/model/index.js';
import { TABLE } from '#lib/resources/index.js';
import {
  DynamoMessageList,
  DynamoMessageStore,
  keys,
  type ListPosition,
  type MessageListPage,
  type MessageListQuery,
} from '#lib/store/index.js';
import { messageRecord, startUnitTable, type UnitTable, uniqueId } from '#test/helpers/unit-dynamo.js';

describe('DynamoMessageList (the byApp and byRecipient indexes)', () => {
  let table: UnitTable;
  let store: DynamoMessageStore;
  let list: DynamoMessageList;
  const nowMs = Date.parse('2026-12-01T12:00:00Z');

  beforeAll(async () => {
    table = await startUnitTable();
    store = new DynamoMessageStore(table.db, table.tableName, () => nowMs);
    list = new DynamoMessageList(table.db, table.tableName);
  });
  afterAll(async () => {
    await table.stop();
  });

  /** A record of `app` accepted `minute` minutes after 08:00, to `touser`. Each test uses an app of its own. */
  const record = (
    app: string,
    minute: number,
    o: { touser?: string[]; msgtype?: 'text' | 'markdown'; second?: number } = {},
  ): MessageRecord => {
    const at = new Date(Date.parse('2026-12-01T08:00:00Z') + minute * 60_000 + (o.second ?? 0)).toISOString();
    const base = messageRecord();
    if (base.request.robot !== undefined) throw new Error('an app record was expected');
    return messageRecord({
      app,
      createdAt: at,
      updatedAt: at,
      request: {
        ...base.request,
        app,
        msgtype: o.msgtype ?? 'text',
        recipients: { touser: o.touser ?? ['alice'], toparty: [], totag: [] },
      },
    });
  };
  const appChannel = (name: string): Channel => ({ kind: 'app', name });
  /** The list's order: newest first, then by id, as the index's sort key `<createdAt>#<id>` orders them. */
  const newestFirst = (records: MessageRecord[]) =>
    [...records]
      .sort((a, b) => `${b.createdAt}#${b.id}`.localeCompare(`${a.createdAt}#${a.id}`))
      .map((r) => r.id);
  /** Every page of a query, following `next` to the end. */
  const allPages = async (q: Omit<MessageListQuery, 'now' | 'after'>) => {
    const pages: MessageListPage[] = [];
    let after: ListPosition | undefined;
    do {
      const page = await list.list({ ...q, now: nowMs, ...(after ? { after } : {}) });
      pages.push(page);
      after = page.next;
      expect(pages.length).toBeLessThan(100);
    } while (after);
    return { pages, ids: pages.flatMap((p) => p.messages.map((m) => m.id)) };
  };

  it('pages through an app newest first, without duplicates or gaps, also within one millisecond', async () => {
    const app = uniqueId('app');
    const single = Array.from({ length: 7 }, (_, i) => record(app, i));
    // A batch POST: every record of it has the same createdAt.
    const batch = Array.from({ length: 9 }, () => record(app, 3, { second: 500 }));
    for (const r of single) await store.create(r);
    expect((await store.createBatch(batch)).unwritten).toEqual([]);

    const { pages, ids } = await allPages({ channel: appChannel(app), limit: 4 });

    expect(ids).toEqual(newestFirst([...single, ...batch]));
    expect(pages.slice(0, -1).every((p) => p.messages.length === 4)).toBe(true);
    expect(pages.at(-1)?.next).toBeUndefined();
  });

  it('shows what a list entry needs, and never another app’s messages', async () => {
    const app = uniqueId('app');
    const other = uniqueId('app');
    const mine = record(app, 1, { touser: ['Alice', 'bob'] });
    await store.create(mine);
    await store.create(record(other, 2));

    const page = await list.list({ channel: appChannel(app), limit: 10, now: nowMs });

    expect(page).toEqual({
      messages: [
        {
          id: mine.id,
          app,
          status: 'queued',
          priority: 'normal',
          msgtype: 'text',
          recipients: { touser: ['Alice', 'bob'], toparty: [], totag: [], omitted: 0 },
          attempts: 0,
          createdAt: mine.createdAt,
          updatedAt: mine.updatedAt,
        },
      ],
    });
  });

  it('shows a first delivery as sent (it is stored beside the record) and a status change as written', async () => {
    const app = uniqueId('app');
    const [delivered, failed, waiting] = [record(app, 1), record(app, 2), record(app, 3)];
    for (const r of [delivered, failed, waiting]) await store.create(r);
    const sentAt = '2026-12-01T08:01:02.000Z';
    await store.putFirstDeliveries([
      {
        id: delivered.id,
        delivery: { at: sentAt, receipt: { msgid: 'm1' } },
        expiresAt: delivered.expiresAt,
      },
    ]);
    await store.transition(failed.id, changes.fail('2026-12-01T08:02:03.000Z', { code: 'x', message: 'y' }));

    const page = await list.list({ channel: appChannel(app), limit: 10, now: nowMs });

    expect(page.messages.map((m) => [m.id, m.status, m.attempts, m.sentAt, m.updatedAt])).toEqual([
      [waiting.id, 'queued', 0, undefined, waiting.updatedAt],
      [failed.id, 'failed', 1, undefined, '2026-12-01T08:02:03.000Z'],
      [delivered.id, 'sent', 1, sentAt, sentAt],
    ]);
  });

  it('filters by status as the message is now: a first delivery is sent, not queued', async () => {
    const app = uniqueId('app');
    const [delivered, failed, waiting, dead] = [1, 2, 3, 4].map((m) => record(app, m)) as [
      MessageRecord,
      MessageRecord,
      MessageRecord,
      MessageRecord,
    ];
    for (const r of [delivered, failed, waiting, dead]) await store.create(r);
    await store.putFirstDeliveries([
      {
        id: delivered.id,
        delivery: { at: '2026-12-01T08:01:01.000Z', receipt: { msgid: 'm' } },
        expiresAt: 1e10,
      },
    ]);
    await store.transition(failed.id, changes.fail('2026-12-01T08:05:00.000Z', { code: 'x', message: 'y' }));
    await store.transition(
      dead.id,
      changes.die('2026-12-01T08:05:00.000Z', undefined, { code: 'd', message: 'd' }),
    );

    const ids = async (statuses: MessageListQuery['statuses']) =>
      (await allPages({ channel: appChannel(app), limit: 1, ...(statuses ? { statuses } : {}) })).ids;

    expect(await ids(['sent'])).toEqual([delivered.id]);
    expect(await ids(['queued'])).toEqual([waiting.id]);
    expect(await ids(['failed', 'dead'])).toEqual([dead.id, failed.id]);
    expect(await ids(['recalled'])).toEqual([]);
  });

  it('filters by msgtype and by acceptance time: since inclusive, until exclusive', async () => {
    const app = uniqueId('app');
    const records = [0, 1, 2, 3, 4].map((m) => record(app, m, { msgtype: m % 2 ? 'markdown' : 'text' }));
    for (const r of records) await store.create(r);
    const at = (m: number) => (records[m] as MessageRecord).createdAt;
    const idsOf = (...ms: number[]) => ms.map((m) => (records[m] as MessageRecord).id);

    expect((await allPages({ channel: appChannel(app), limit: 2, msgtype: 'markdown' })).ids).toEqual(
      idsOf(3, 1),
    );
    expect((await allPages({ channel: appChannel(app), limit: 2, since: at(1), until: at(3) })).ids).toEqual(
      idsOf(2, 1),
    );
    expect((await allPages({ channel: appChannel(app), limit: 2, since: at(3) })).ids).toEqual(idsOf(4, 3));
    expect((await allPages({ channel: appChannel(app), limit: 2, until: at(1) })).ids).toEqual(idsOf(0));
    expect((await allPages({ channel: appChannel(app), limit: 5, since: at(2), until: at(2) })).ids).toEqual(
      [],
    );
  });

  it('finds what DynamoDB’s filter decides beyond the first `limit` messages, in one page', async () => {
    const app = uniqueId('app');
    const markdown = record(app, 0, { msgtype: 'markdown' });
    const failed = record(app, 1);
    const newer = Array.from({ length: 6 }, (_, i) => record(app, 2 + i));
    for (const r of [markdown, failed, ...newer]) await store.create(r);
    await store.transition(failed.id, changes.fail('2026-12-01T08:01:01.000Z', { code: 'x', message: 'y' }));

    expect(await list.list({ channel: appChannel(app), limit: 1, msgtype: 'markdown', now: nowMs })).toEqual({
      messages: [expect.objectContaining({ id: markdown.id })],
    });
    expect(await list.list({ channel: appChannel(app), limit: 1, statuses: ['failed'], now: nowMs })).toEqual(
      {
        messages: [expect.objectContaining({ id: failed.id, status: 'failed' })],
      },
    );
    // `queued` may have been sent since (a first delivery): known only once read, so a page looks at `limit` + 1.
    const queued = await list.list({ channel: appChannel(app), limit: 1, statuses: ['queued'], now: nowMs });
    expect(queued.messages.map((m) => m.id)).toEqual([newer[5]?.id]);
    expect(queued.next).toEqual({ createdAt: newer[5]?.createdAt, id: newer[5]?.id });
  });

  it('finds a message by any of its users, case-folded, through an index item per further user', async () => {
    const app = uniqueId('app');
    const users = Array.from({ length: 30 }, (_, i) => `User${i}`);
    const many = record(app, 1, { touser: users });
    const alone = record(app, 2, { touser: ['user7'] });
    await store.createBatch([many]);
    await store.create(alone);

    for (const user of ['user0', 'user7', 'user29']) {
      expect((await allPages({ channel: appChannel(app), limit: 10, touser: user })).ids, user).toEqual(
        user === 'user7' ? [alone.id, many.id] : [many.id],
      );
    }
    expect(
      (await list.list({ channel: appChannel(app), limit: 10, touser: 'user30', now: nowMs })).messages,
    ).toEqual([]);
    // The first user is indexed on the record itself; the 29 others by entries of their own.
    const entry = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: keys.recipient(many.id, 'user29') }),
    );
    expect(entry.Item).toMatchObject({ toKey: `MSGTO#${app}#user29`, id: many.id });
    const [found] = (await list.list({ channel: appChannel(app), limit: 10, touser: 'user0', now: nowMs }))
      .messages;
    expect(found?.recipients).toEqual({ touser: users.slice(0, 20), toparty: [], totag: [], omitted: 10 });
  });

  it('pages a recipient through records and entries alike, with the current status of each', async () => {
    const app = uniqueId('app');
    // Bob first (the record's own index key) in some, later (an entry) in others.
    const records = Array.from({ length: 7 }, (_, i) =>
      record(app, i, { touser: i % 2 ? ['BOB', 'carol'] : ['carol', 'Bob'] }),
    );
    await store.createBatch(records.slice(0, 4));
    for (const r of records.slice(4)) await store.create(r);
    await store.create(record(app, 9, { touser: ['carol'] }));
    const first = records[0] as MessageRecord;
    await store.putFirstDeliveries([
      {
        id: first.id,
        delivery: { at: '2026-12-01T08:00:01.000Z', receipt: { msgid: 'm' } },
        expiresAt: 1e10,
      },
    ]);

    const { ids, pages } = await allPages({ channel: appChannel(app), limit: 3, touser: 'bob' });

    expect(ids).toEqual(newestFirst(records));
    expect(pages.flatMap((p) => p.messages).find((m) => m.id === first.id)?.status).toBe('sent');
    expect(
      (await allPages({ channel: appChannel(app), limit: 2, touser: 'bob', statuses: ['sent'] })).ids,
    ).toEqual([first.id]);
    expect(
      (await allPages({ channel: appChannel(app), limit: 2, touser: 'bob', msgtype: 'markdown' })).ids,
    ).toEqual([]);
  });

  it('leaves out records past their expiry (DynamoDB TTL deletes late)', async () => {
    const app = uniqueId('app');
    const expired = { ...record(app, 1, { touser: ['dora'] }), expiresAt: nowMs / 1000 - 1 };
    const live = record(app, 2, { touser: ['dora'] });
    await store.create(expired);
    await store.create(live);

    expect((await allPages({ channel: appChannel(app), limit: 5 })).ids).toEqual([live.id]);
    expect((await allPages({ channel: appChannel(app), limit: 5, touser: 'dora' })).ids).toEqual([live.id]);
  });

  it('keeps the index attributes out of the record read back, and indexes only what it should', async () => {
    const app = uniqueId('app');
    const r = record(app, 1, { touser: ['Erin', 'frank'] });
    await store.create(r);

    expect(await store.get(r.id)).toEqual(r);
    const raw = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: TABLE.recipientIndex.name,
        KeyConditionExpression: 'toKey = :k',
        ExpressionAttributeValues: { ':k': `MSGTO#${app}#erin` },
      }),
    );
    expect(raw.Items).toEqual([
      {
        ...keys.message(r.id),
        toKey: `MSGTO#${app}#erin`,
        listSort: `${r.createdAt}#${r.id}`,
        id: r.id,
        msgtype: 'text',
        expiresAt: r.expiresAt,
      },
    ]);
  });

  /** A client whose BatchWriteItem fails for good when a chunk holds an item whose pk is in `failing`. */
  const failingFor = (failing: Set<string>) => ({
    send: async (command: BatchWriteCommand | GetCommand) => {
      if (command instanceof BatchWriteCommand) {
        const items = command.input.RequestItems?.[table.tableName] ?? [];
        if (items.some((i) => failing.has(String(i.PutRequest?.Item?.pk))))
          throw new Error('throttled for good');
      }
      return table.db.send(command as never);
    },
  });

  it('reports a batch message as not written when one of its recipient entries was not', async () => {
    const app = uniqueId('app');
    const users = Array.from({ length: 30 }, (_, i) => `u${i}`);
    const [broken, fine] = [record(app, 1, { touser: users }), record(app, 2, { touser: ['u0', 'u1'] })];
    const flaky = new DynamoMessageStore(
      failingFor(new Set([keys.recipient(broken.id, 'u29').pk])) as never,
      table.tableName,
      () => nowMs,
    );

    // fine's record and entry, broken's record and 22 entries in the first chunk; broken's other 7 in the second.
    const { unwritten } = await flaky.createBatch([fine, broken]);

    // Its record was written: the caller withdraws it (lib/ingest accept.ts), as for any message not written.
    expect(unwritten).toEqual([broken.id]);
    expect((await store.get(broken.id))?.id).toBe(broken.id);
    expect((await allPages({ channel: appChannel(app), limit: 5, touser: 'u1' })).ids).toEqual([
      fine.id,
      broken.id,
    ]);
  });

  it('writes no record of a single message whose recipient entries could not be written', async () => {
    const app = uniqueId('app');
    const r = record(app, 1, { touser: ['gina', 'hal'] });
    const flaky = new DynamoMessageStore(
      failingFor(new Set([keys.recipient(r.id, 'hal').pk])) as never,
      table.tableName,
      () => nowMs,
    );

    await expect(flaky.create(r)).rejects.toThrow();

    expect(await store.get(r.id)).toBeUndefined();
    expect((await list.list({ channel: appChannel(app), limit: 5, now: nowMs })).messages).toEqual([]);
  });
});
