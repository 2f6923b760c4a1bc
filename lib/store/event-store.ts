import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CallbackEvent } from '#lib/callback/index.js';
import { taskKeyOf } from '#lib/model/index.js';
import { TABLE } from '#lib/resources/index.js';
import { conditionalWrite, type DocClient, portClient } from './client.js';
import { feedPartition, isExpired, keys, MESSAGE_EVENT_PREFIX } from './keys.js';

/** A WeCom callback event as the gateway keeps it. */
export interface StoredEvent {
  /** Its dedupe key (lib/callback `dedupeKey`): the same for every retry of one callback. */
  id: string;
  app: string;
  /** When the first copy arrived (ISO 8601). */
  receivedAt: string;
  /** The message it is tied to (a card's task_id), if any. */
  messageId?: string;
  /** The parsed event, without a card's response_code. */
  event: CallbackEvent;
}

export type RecordOutcome =
  | { outcome: 'stored' }
  /** Stored before (a retry of the callback): the first copy, and whether its webhook job was queued. */
  | { outcome: 'duplicate'; first: StoredEvent; notified: boolean };

export interface EventPage {
  events: StoredEvent[];
  /** Pass as `cursor` for the next page; absent when the feed has nothing more now. */
  cursor?: string;
}

/** Port: received WeCom events and the card index. */
export interface EventStore {
  /**
   * Stores an event once per (app, id), however often WeCom retries the callback: one conditional write of the
   * event item (the app's feed index orders it by arrival) and, when it is tied to a message, a copy in the
   * message's partition. A retry finds the item and writes that copy again (an idempotent put), which completes a
   * first attempt that failed half-way.
   */
  record(event: StoredEvent, expiresAt: number): Promise<RecordOutcome>;
  /** Notes on the claim that the event's webhook job is queued, so a retried callback does not queue it again. */
  markNotified(app: string, id: string): Promise<void>;
  /** The message a template card's task_id belongs to (the newest, should a client have reused a task_id). */
  findMessageByTask(app: string, taskId: string): Promise<string | undefined>;
  /** An app's events received since `since` (ISO 8601), oldest first, `limit` at most. */
  listByApp(
    app: string,
    since: string,
    opts: { limit: number; cursor?: string; now: number },
  ): Promise<EventPage>;
  /** A message's events, newest first. */
  listByMessage(messageId: string, limit: number): Promise<StoredEvent[]>;
}

/** The bad cursor a client sent back (it is opaque to them): the HTTP layer answers 400. */
export class InvalidCursorError extends Error {
  override readonly name = 'InvalidCursorError';
  readonly code = 'invalid_cursor';
}

const FEED = TABLE.feedIndex;

/** The feed index's keys of an event item: its app and month, then when it arrived. */
const feedKeys = (item: EventItem) => ({
  [FEED.partitionKey]: feedPartition(item.app, item.receivedAt.slice(0, 7)),
  [FEED.sortKey]: `${item.receivedAt}#${item.id}`,
});

/** Months of feed partitions one page request looks at before handing back a cursor (retention is ≤ 10 years). */
const MAX_MONTHS_PER_PAGE = 13;

/** `YYYY-MM` of an ISO 8601 time. */
const monthOf = (iso: string): string => iso.slice(0, 7);
const nextMonth = (month: string): string => {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
};

interface EventItem {
  id: string;
  app: string;
  receivedAt: string;
  messageId?: string;
  /** JSON: WeCom's XML may hold any element name, and a string keeps every value exactly as parsed. */
  event: string;
  expiresAt: number;
}

const toItem = (e: StoredEvent, expiresAt: number): EventItem => ({
  id: e.id,
  app: e.app,
  receivedAt: e.receivedAt,
  ...(e.messageId !== undefined ? { messageId: e.messageId } : {}),
  event: JSON.stringify(e.event),
  expiresAt,
});

const fromItem = (item: Record<string, unknown>): StoredEvent => ({
  id: String(item.id),
  app: String(item.app),
  receivedAt: String(item.receivedAt),
  ...(typeof item.messageId === 'string' ? { messageId: item.messageId } : {}),
  event: JSON.parse(String(item.event)) as CallbackEvent,
});

export class DynamoEventStore implements EventStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.db = portClient(db);
  }

  async record(event: StoredEvent, expiresAt: number, retries = 1): Promise<RecordOutcome> {
    const item = toItem(event, expiresAt);
    // The event item is its own dedupe claim: one conditional write stores it, and the feed index orders it.
    const claimed = await conditionalWrite(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...keys.event(event.app, event.id), ...item, ...feedKeys(item) },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    if (claimed) {
      await this.putMessageCopy(item);
      return { outcome: 'stored' };
    }
    const out = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keys.event(event.app, event.id),
        ConsistentRead: true,
      }),
    );
    // The item was deleted between the two requests (it expired): claim again, once.
    if (!out.Item) {
      if (retries > 0) return this.record(event, expiresAt, retries - 1);
      throw new Error('callback claim keeps disappearing between claim and read');
    }
    const first = out.Item as EventItem & { notified?: boolean };
    // A first attempt that failed after its claim left this copy unwritten: write it (the same content again).
    await this.putMessageCopy(first);
    return { outcome: 'duplicate', first: fromItem(out.Item), notified: first.notified === true };
  }

  /** A tied event's copy in its message's partition (listed with the message): a plain put, safe to repeat. */
  private async putMessageCopy(item: EventItem): Promise<void> {
    if (!item.messageId) return;
    const content: EventItem = {
      id: item.id,
      app: item.app,
      receivedAt: item.receivedAt,
      messageId: item.messageId,
      event: item.event,
      expiresAt: item.expiresAt,
    };
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keys.messageEvent(item.messageId, item.receivedAt, item.id), ...content },
      }),
    );
  }

  async markNotified(app: string, id: string): Promise<void> {
    await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.event(app, id),
          UpdateExpression: 'SET notified = :yes',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':yes': true },
        }),
      ),
    );
  }

  async findMessageByTask(app: string, taskId: string): Promise<string | undefined> {
    const index = TABLE.taskIndex;
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: index.name,
        KeyConditionExpression: '#task = :task',
        ExpressionAttributeNames: { '#task': index.partitionKey },
        ExpressionAttributeValues: { ':task': taskKeyOf(app, taskId) },
        ScanIndexForward: false,
        Limit: 1,
      }),
    );
    const pk = out.Items?.[0]?.pk;
    return typeof pk === 'string' && pk.startsWith('MSG#') ? pk.slice(4) : undefined;
  }

  async listByApp(
    app: string,
    since: string,
    opts: { limit: number; cursor?: string; now: number },
  ): Promise<EventPage> {
    let { month, after } = opts.cursor ? decodeCursor(opts.cursor) : { month: monthOf(since), after: since };
    const thisMonth = monthOf(new Date(opts.now).toISOString());
    const events: StoredEvent[] = [];
    for (let months = 0; month <= thisMonth; months++) {
      if (months === MAX_MONTHS_PER_PAGE) return { events, cursor: encodeCursor(month, after) };
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: FEED.name,
          KeyConditionExpression: '#feed = :feed AND #sort > :after',
          ExpressionAttributeNames: { '#feed': FEED.partitionKey, '#sort': FEED.sortKey },
          ExpressionAttributeValues: { ':feed': feedPartition(app, month), ':after': after },
          Limit: opts.limit - events.length,
        }),
      );
      const items = (out.Items ?? []).filter((i) => !isExpired(i as { expiresAt?: number }, this.now()));
      events.push(...items.map(fromItem));
      const last = out.Items?.at(-1)?.[FEED.sortKey];
      if (events.length >= opts.limit || out.LastEvaluatedKey) {
        return { events, cursor: encodeCursor(month, typeof last === 'string' ? last : after) };
      }
      month = nextMonth(month);
      // From the month's start: `YYYY-MM` sorts before every `YYYY-MM-DDT…#id` of that month. Not '': DynamoDB
      // refuses an empty string as a key value, even in a condition (dynalite lets it pass).
      after = month;
    }
    // Caught up: the next page starts after the last event seen (none: the caller asks with `since` again).
    const last = events.at(-1);
    return {
      events,
      ...(last ? { cursor: encodeCursor(monthOf(last.receivedAt), `${last.receivedAt}#${last.id}`) } : {}),
    };
  }

  async listByMessage(messageId: string, limit: number): Promise<StoredEvent[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.message(messageId).pk, ':prefix': MESSAGE_EVENT_PREFIX },
        ScanIndexForward: false,
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    return (out.Items ?? []).map(fromItem);
  }
}

/** Opaque to clients: where the feed left off (a month partition and a sort key in it). */
function encodeCursor(month: string, after: string): string {
  return Buffer.from(JSON.stringify({ m: month, a: after })).toString('base64url');
}

function decodeCursor(cursor: string): { month: string; after: string } {
  try {
    const { m, a } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      m?: unknown;
      a?: unknown;
    };
    if (
      typeof m === 'string' &&
      /^\d{4}-(0[1-9]|1[0-2])$/.test(m) &&
      typeof a === 'string' &&
      a.length >= 1 &&
      a.length <= 1024
    ) {
      return { month: m, after: a };
    }
  } catch {
    // fall through
  }
  throw new InvalidCursorError('cursor is not one this API handed out');
}
