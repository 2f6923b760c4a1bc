import { BatchGetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  type Addressed,
  type Channel,
  channelKey,
  channelOf,
  type MsgType,
  type RobotMsgType,
} from '#lib/messages/index.js';
import {
  type MessageStatus,
  type MessageSummary,
  mayHaveFirstDelivery,
  STATUS,
  summaryWithFirstDelivery,
  TRANSITIONS,
} from '#lib/model/index.js';
import { MESSAGE_SUMMARY_ATTRIBUTES, TABLE } from '#lib/resources/index.js';
import { type DocClient, portClient } from './client.js';
import { StoreUnavailableError } from './errors.js';
import {
  channelOfPartition,
  epochSeconds,
  FIRST_DELIVERY_SK,
  keys,
  listPartition,
  listSortKey,
  messageIdOf,
  parseListSortKey,
  RECIPIENT_SK,
  RECORD_SK,
  recipientPartition,
} from './keys.js';
import { INDEX_ATTR } from './message-store.js';

/**
 * Where a page of the list ended: the last message it looked at, by its acceptance time and id (the list's order).
 * `entry`: in a `touser` list, whether the index held that message under a recipient entry rather than its record
 * (keys.ts), which the next page's start key must name.
 */
export interface ListPosition {
  createdAt: string;
  id: string;
  entry?: boolean;
}

/** What to list: one app's (or group robot's) messages, newest first, narrowed by the filters given. */
export interface MessageListQuery {
  channel: Channel;
  /** A listed user, case-folded (lib/messages `foldUserId`). */
  touser?: string;
  /** Any of these statuses (as the message is now, its first delivery counted). */
  statuses?: readonly MessageStatus[];
  msgtype?: MsgType | RobotMsgType;
  /** Accepted at or after (ISO 8601 UTC as `toISOString` writes it). */
  since?: string;
  /** Accepted before. Not before `since`. */
  until?: string;
  /** Messages per page, 1-100. */
  limit: number;
  /**
   * Continue after this position. It must lie in [since, until): a start key outside the key condition is a
   * ValidationException in DynamoDB.
   */
  after?: ListPosition;
  /** Epoch ms: records past their expiry (TTL deletes late) are left out. */
  now: number;
}

export interface MessageListPage {
  /** In the list's order; up to `limit`, fewer (even none) when filters left messages out. */
  messages: MessageSummary[];
  /** Where to continue; absent at the end of the list. */
  next?: ListPosition;
}

/** Port: the message list (`GET /v1/messages`). */
export interface MessageList {
  /**
   * One page: one Query on the app's index partition (`byApp`, or `byRecipient` with `touser`), then the current
   * state of what it found with BatchGetItem (see {@link DynamoMessageList}).
   */
  list(query: MessageListQuery): Promise<MessageListPage>;
}

/**
 * Items one page's Query may look at when filters the index can check itself (msgtype, and statuses a first
 * delivery cannot change) leave most of them out: the page then holds up to `limit` of the matches among this many,
 * rather than `limit` looked at. About 300 bytes each in the index: well under a Query's 1 MB.
 */
export const MAX_EXAMINED = 1_000;
/** BatchGetItem takes at most 100 keys per request. */
const BATCH_GET_KEYS = 100;
/** What a list entry needs of a record read by key (a `touser` page), and of a first delivery (its time). */
const READ_ATTRIBUTES = [...MESSAGE_SUMMARY_ATTRIBUTES, 'robot', 'schedule', 'pk', 'sk', 'at'];

/**
 * The message list over the `byApp` and `byRecipient` indexes (lib/resources `TABLE`, keys.ts).
 *
 * By app: the index holds each record's summary, so one Query reads the page; msgtype, expiry and the statuses
 * that could match are checked by DynamoDB (a FilterExpression). A message whose record is still `queued`,
 * `deferred` or `dead` may have been sent meanwhile: its first delivery is an item beside the record, read for those
 * messages by one BatchGetItem (at most `limit` keys) and folded in, as reading the message does.
 *
 * By recipient: the index holds ids only (a recipient entry cannot follow its message's status), so the page's
 * records and first deliveries are read by BatchGetItem: two keys per message, one request per 50 messages.
 *
 * Each page shows at most `limit` of the index items its Query found, in order, minus those a filter only the
 * current state can decide leaves out. The Query looks at `limit` + 1 items (one more tells whether the list goes
 * on), or at up to {@link MAX_EXAMINED} when DynamoDB's own filter decides the page (msgtype, statuses a first
 * delivery cannot change). So a filtered page may hold fewer than `limit` messages with more to come: the caller
 * follows `next` until it is absent.
 */
export class DynamoMessageList implements MessageList {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
  ) {
    this.db = portClient(db);
  }

  async list(q: MessageListQuery): Promise<MessageListPage> {
    return q.touser === undefined ? this.byApp(q) : this.byRecipient(q, q.touser);
  }

  private async byApp(q: MessageListQuery): Promise<MessageListPage> {
    const index = TABLE.listIndex;
    // A status a first delivery may turn into `sent` (or `sent` itself) is known only once the deliveries are read;
    // any other status, and msgtype, DynamoDB's filter decides on its own.
    const statusesDecided =
      q.statuses === undefined ||
      q.statuses.every((s) => s !== STATUS.sent && !mayHaveFirstDelivery({ status: s }));
    const filtered = q.msgtype !== undefined || q.statuses !== undefined;
    const found = await this.query(q, {
      indexName: index.name,
      partition: listPartition(channelKey(q.channel)),
      examine: filtered && statusesDecided ? MAX_EXAMINED : q.limit + 1,
      ...(q.statuses ? { statuses: storedStatusesFor(q.statuses) } : {}),
      startKey: (after) => ({
        ...keys.message(after.id),
        [index.partitionKey]: listPartition(channelKey(q.channel)),
        [index.sortKey]: listSortKey(after.createdAt, after.id),
      }),
    });
    const candidates = found.items.slice(0, q.limit).map(summaryOfItem);
    const { sent, schedules } = await this.stateOutsideIndex(
      candidates.filter(mayHaveFirstDelivery).map((s) => s.id),
      candidates.filter((s) => s.status === STATUS.scheduled).map((s) => s.id),
    );
    const messages = candidates
      .map((s) => {
        const schedule = schedules.get(s.id);
        return summaryWithFirstDelivery(schedule ? { ...s, schedule } : s, sent.get(s.id));
      })
      .filter((s) => isOf(s, q.channel) && matchesStatus(q, s));
    return { messages, ...nextOf(found, q.limit) };
  }

  private async byRecipient(q: MessageListQuery, user: string): Promise<MessageListPage> {
    const index = TABLE.recipientIndex;
    const found = await this.query(q, {
      indexName: index.name,
      partition: recipientPartition(channelKey(q.channel), user),
      // The index holds no status, so it narrows by msgtype only.
      examine: q.msgtype !== undefined && q.statuses === undefined ? MAX_EXAMINED : q.limit + 1,
      startKey: (after) => ({
        ...(after.entry ? keys.recipient(after.id, user) : keys.message(after.id)),
        [index.partitionKey]: recipientPartition(channelKey(q.channel), user),
        [index.sortKey]: listSortKey(after.createdAt, after.id),
      }),
    });
    const ids = found.items
      .slice(0, q.limit)
      .flatMap((item) => (typeof item.id === 'string' ? [item.id] : []));
    const current = await this.currentSummaries(ids);
    // No record: it expired, or its entries were written and the record was not (keys.ts). Never another channel's.
    const messages = ids.flatMap((id) => {
      const s = current.get(id);
      return s && isOf(s, q.channel) && !isExpired(s, q.now) && matchesStatus(q, s) ? [withoutExpiry(s)] : [];
    });
    return { messages, ...nextOf(found, q.limit) };
  }

  /** One Query, newest first, on an index partition within the query's time range, after its position. */
  private async query(
    q: MessageListQuery,
    o: {
      indexName: string;
      partition: string;
      examine: number;
      statuses?: readonly MessageStatus[];
      startKey: (after: ListPosition) => Record<string, unknown>;
    },
  ): Promise<Found> {
    const names: Record<string, string> = {
      '#p':
        o.indexName === TABLE.recipientIndex.name
          ? TABLE.recipientIndex.partitionKey
          : TABLE.listIndex.partitionKey,
      '#exp': TABLE.ttlAttribute,
    };
    // DynamoDB refuses a name the expressions do not use: the sort key's only with a time bound.
    if (q.since !== undefined || q.until !== undefined) names['#s'] = TABLE.listIndex.sortKey;
    // DynamoDB TTL deletes late: an expired record is no longer a message.
    const values: Record<string, unknown> = { ':p': o.partition, ':now': epochSeconds(q.now) };
    let keyCondition = '#p = :p';
    // `until` is exclusive: every sort key of that millisecond (`<until>#<id>`) sorts after the bare time.
    if (q.since !== undefined && q.until !== undefined) {
      keyCondition += ' AND #s BETWEEN :since AND :until';
      Object.assign(values, { ':since': q.since, ':until': q.until });
    } else if (q.since !== undefined) {
      keyCondition += ' AND #s >= :since';
      values[':since'] = q.since;
    } else if (q.until !== undefined) {
      keyCondition += ' AND #s < :until';
      values[':until'] = q.until;
    }
    const filters = ['#exp > :now'];
    if (q.msgtype !== undefined) {
      filters.push('#mt = :mt');
      names['#mt'] = INDEX_ATTR.msgtype;
      values[':mt'] = q.msgtype;
    }
    if (o.statuses !== undefined) {
      const placeholders = o.statuses.map((s, i) => {
        values[`:st${i}`] = s;
        return `:st${i}`;
      });
      filters.push(`#st IN (${placeholders.join(', ')})`);
      names['#st'] = 'status';
    }
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: o.indexName,
        KeyConditionExpression: keyCondition,
        FilterExpression: filters.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
        Limit: o.examine,
        ...(q.after ? { ExclusiveStartKey: o.startKey(q.after) } : {}),
      }),
    );
    const lastKey = out.LastEvaluatedKey ? positionOf(out.LastEvaluatedKey) : undefined;
    return { items: (out.Items ?? []) as Record<string, unknown>[], ...(lastKey ? { lastKey } : {}) };
  }

  /**
   * What the index does not hold, in one BatchGetItem: when each of `mayBeSent`'s first delivery was recorded (for
   * those that have one), and the schedule of each of `scheduled` (the index projects no schedule).
   */
  private async stateOutsideIndex(
    mayBeSent: string[],
    scheduled: string[],
  ): Promise<{ sent: Map<string, string>; schedules: Map<string, NonNullable<MessageSummary['schedule']>> }> {
    const sent = new Map<string, string>();
    const schedules = new Map<string, NonNullable<MessageSummary['schedule']>>();
    const wanted = [
      ...mayBeSent.map((id) => keys.firstDelivery(id)),
      ...scheduled.map((id) => keys.message(id)),
    ];
    if (wanted.length === 0) return { sent, schedules };
    for (const item of await this.batchGet(wanted)) {
      const id = messageIdOf(item.pk);
      if (id === undefined) continue;
      if (item.sk === FIRST_DELIVERY_SK && typeof item.at === 'string') sent.set(id, item.at);
      const schedule = scheduleOfItem(item);
      if (item.sk === RECORD_SK && schedule) schedules.set(id, schedule);
    }
    return { sent, schedules };
  }

  /** The current summaries (first deliveries folded in) of these messages, read from their records. */
  private async currentSummaries(ids: string[]): Promise<Map<string, MessageSummary & Expiring>> {
    const items = await this.batchGet(ids.flatMap((id) => [keys.message(id), keys.firstDelivery(id)]));
    const deliveries = new Map<string, string>();
    for (const item of items) {
      const id = messageIdOf(item.pk);
      if (id !== undefined && item.sk === FIRST_DELIVERY_SK && typeof item.at === 'string')
        deliveries.set(id, item.at);
    }
    const current = new Map<string, MessageSummary & Expiring>();
    for (const item of items) {
      if (item.sk !== RECORD_SK) continue;
      const s = summaryOfItem(item);
      const expiresAt = typeof item.expiresAt === 'number' ? item.expiresAt : undefined;
      current.set(s.id, {
        ...summaryWithFirstDelivery(s, deliveries.get(s.id)),
        ...(expiresAt ? { expiresAt } : {}),
      });
    }
    return current;
  }

  /**
   * Items by key, eventually consistent (a list may lag a moment, like its index), in requests of 100 keys sent
   * together; keys DynamoDB leaves unprocessed (throttling) are asked again a few times with backoff.
   */
  private async batchGet(itemKeys: { pk: string; sk: string }[]): Promise<Record<string, unknown>[]> {
    const names = Object.fromEntries(READ_ATTRIBUTES.map((a, i) => [`#a${i}`, a]));
    const chunks: (typeof itemKeys)[] = [];
    for (let i = 0; i < itemKeys.length; i += BATCH_GET_KEYS)
      chunks.push(itemKeys.slice(i, i + BATCH_GET_KEYS));
    const read = async (chunk: typeof itemKeys) => {
      const found: Record<string, unknown>[] = [];
      let pending: Record<string, unknown>[] = chunk;
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt === 4) throw new StoreUnavailableError({ cause: new Error('keys left unprocessed') });
        if (attempt > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
        const out = await this.db.send(
          new BatchGetCommand({
            RequestItems: {
              [this.tableName]: {
                Keys: pending,
                ProjectionExpression: Object.keys(names).join(', '),
                ExpressionAttributeNames: names,
              },
            },
          }),
        );
        found.push(...((out.Responses?.[this.tableName] ?? []) as Record<string, unknown>[]));
        pending = (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
      }
      return found;
    };
    return (await Promise.all(chunks.map(read))).flat();
  }
}

/** What one Query found: its items in order, and the position of the last item it looked at, if it stopped early. */
interface Found {
  items: Record<string, unknown>[];
  lastKey?: ListPosition;
}

interface Expiring {
  expiresAt?: number;
}

/** Every status a message may show as one of `wanted` once its first delivery is folded in: `sent` includes those. */
function storedStatusesFor(wanted: readonly MessageStatus[]): MessageStatus[] {
  const stored = new Set<MessageStatus>(wanted);
  if (stored.has(STATUS.sent)) for (const s of TRANSITIONS.send.from) stored.add(s);
  return [...stored];
}

const matchesStatus = (q: MessageListQuery, s: MessageSummary): boolean =>
  q.statuses === undefined || q.statuses.includes(s.status);

const isExpired = (s: Expiring, nowMs: number): boolean =>
  s.expiresAt !== undefined && s.expiresAt * 1000 <= nowMs;

const withoutExpiry = ({ expiresAt: _, ...s }: MessageSummary & Expiring): MessageSummary => s;

/** The position of an index item (or of a LastEvaluatedKey): its sort key, and whether it is a recipient entry. */
function positionOf(item: Record<string, unknown>): ListPosition | undefined {
  const position = parseListSortKey(item[TABLE.listIndex.sortKey]);
  if (!position) return undefined;
  return item.sk === RECIPIENT_SK ? { ...position, entry: true } : position;
}

/**
 * Where the next page starts: after the last item shown when the Query found more than a page (it looked at one
 * more than `limit`, or filtered within {@link MAX_EXAMINED}), else after the last item it looked at
 * (LastEvaluatedKey), else nowhere: the end of the list.
 */
function nextOf(found: Found, limit: number): { next?: ListPosition } {
  const shownLast = found.items.length > limit ? found.items[limit - 1] : undefined;
  const next = shownLast ? positionOf(shownLast) : found.lastKey;
  return next ? { next } : {};
}

/** Whether a message goes through the channel (an app and a robot of one name are two channels). */
function isOf(m: Addressed, channel: Channel): boolean {
  const own = channelOf(m);
  return own.kind === channel.kind && own.name === channel.name;
}

/**
 * The channel of a record item, or of its copy in the `byApp` index: an app's records carry `app`; a robot's carry
 * `robot`, which the index does not copy (its projection predates robots), so there it is read from the partition
 * key the robot's messages are listed under.
 */
function channelOfItem(item: Record<string, unknown>): Addressed {
  if (typeof item.app === 'string') return { app: item.app };
  if (typeof item.robot === 'string') return { robot: item.robot };
  const channel = channelOfPartition(item[TABLE.listIndex.partitionKey]);
  return channel?.kind === 'robot' ? { robot: channel.name } : { app: String(item.app) };
}

/** A list entry from an item holding {@link MESSAGE_SUMMARY_ATTRIBUTES} (an index item, or a record read by key). */
function summaryOfItem(item: Record<string, unknown>): MessageSummary {
  const to = (item[INDEX_ATTR.to] ?? {}) as Partial<MessageSummary['recipients']>;
  return {
    id: String(item.id),
    ...channelOfItem(item),
    status: item.status as MessageStatus,
    priority: item.priority as MessageSummary['priority'],
    msgtype: item[INDEX_ATTR.msgtype] as MsgType | RobotMsgType,
    recipients: {
      touser: to.touser ?? [],
      toparty: to.toparty ?? [],
      totag: to.totag ?? [],
      omitted: to.omitted ?? 0,
    },
    attempts: Number(item.attempts ?? 0),
    createdAt: String(item.createdAt),
    updatedAt: String(item.updatedAt),
    ...(typeof item.sentAt === 'string' ? { sentAt: item.sentAt } : {}),
    ...scheduleField(item),
  };
}

const scheduleField = (item: Record<string, unknown>): Pick<MessageSummary, 'schedule'> => {
  const schedule = scheduleOfItem(item);
  return schedule ? { schedule } : {};
};

/** A record item's schedule, as a list entry shows it. */
function scheduleOfItem(item: Record<string, unknown>): MessageSummary['schedule'] {
  const s = item.schedule as { dueAt?: unknown; releaseAt?: unknown } | undefined;
  return typeof s?.dueAt === 'string' && typeof s.releaseAt === 'string'
    ? { dueAt: s.dueAt, releaseAt: s.releaseAt }
    : undefined;
}
