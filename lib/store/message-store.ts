import { BatchWriteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { channelKey, channelOf, foldUserId } from '#lib/messages/index.js';
import {
  type FirstDelivery,
  type MessageEvent,
  type MessageRecord,
  newRecord,
  PENDING_STATUSES,
  type RecordOrigin,
  recipientsPreview,
  STATUS,
  type StatusChange,
  type TransitionName,
  withFirstDelivery,
} from '#lib/model/index.js';
import { TABLE } from '#lib/resources/index.js';
import { conditionalWrite, type DocClient, portClient } from './client.js';
import { StoreRejectedError, StoreUnavailableError } from './errors.js';
import { isExpired, keys, listPartition, listSortKey, recipientPartition } from './keys.js';

/** Port: where message records live. */
export interface MessageStore {
  /**
   * Writes a new record; `exists` when a record with its id is stored already (then the record is not written).
   * A record listing more than one user first gets its recipient entries (keys.ts), so no record is stored that
   * `GET /v1/messages?touser=` cannot find.
   */
  create(record: MessageRecord): Promise<'created' | 'exists'>;
  /**
   * Creates new records (fresh ids) in one BatchWriteItem per 25 — a batch POST's records in 4 requests instead
   * of 100 — with their recipient entries in the same requests. Unconditional: BatchWriteItem has no conditions,
   * and a new ULID cannot collide with a stored one. Returns the ids that were not written, record or any entry
   * (the caller fails them; it never enqueues a message without its record), and among them those DynamoDB refused
   * as too large (a chunk refused as a whole is written item by item, so only the offending item is refused).
   */
  createBatch(records: MessageRecord[]): Promise<BatchCreateResult>;
  /**
   * Strongly consistent: a redelivery must see a `sent` written a moment ago. The record comes with its first
   * delivery folded in (lib/model `withFirstDelivery`).
   */
  get(id: string): Promise<MessageRecord | undefined>;
  /**
   * Records first deliveries in one BatchWriteItem per 25. BatchWriteItem has no conditions, so each outcome is an
   * item of its own beside the record (same partition), never an overwrite of it: {@link get} applies it under the
   * `send` transition's condition, so a record that was failed, expired or recalled meanwhile is never turned
   * back into `sent`. Returns the ids that were not written.
   */
  putFirstDeliveries(deliveries: FirstDeliveryItem[]): Promise<string[]>;
  /**
   * A named status change (lib/model `changes`), applied as `applyChange` does in memory; false when the record is
   * missing or its status is not in the change's `from`.
   */
  transition(id: string, change: StatusChange): Promise<boolean>;
  /**
   * A copy claims the right to send, while its message is pending: once per generation for a first receive (SQS
   * may hold two copies of one deferral, an SDK retry of a SendMessage that had succeeded; true for exactly one of
   * them), again by a `redelivery` of the copy that holds it. A message canceled first is never claimed, and a
   * claimed one is never canceled (lib/model `changes.cancel`): the fence between a copy in flight and a cancel.
   */
  claimCopy(id: string, generation: number, opts?: { redelivery?: boolean }): Promise<boolean>;
  /**
   * Appends an event that changes no status (a card updated through `POST /v1/messages/{id}/card`) to the record's
   * timeline. False when there is no such record.
   */
  noteEvent(id: string, event: MessageEvent): Promise<boolean>;
}

/**
 * Told of every status the store writes, with the record as written: the one place the lifecycle's outcomes
 * leave the store (the notify queue's webhooks). First deliveries (`putFirstDeliveries` with their origin) count as
 * `send`.
 * It must not throw: the status is written either way (a listener that fails logs and counts its failure).
 */
export type StatusListener = (record: MessageRecord, transition: TransitionName) => Promise<void>;

export interface BatchCreateResult {
  unwritten: string[];
  /** Subset of `unwritten`: refused by DynamoDB as too large (400 KB); sent again it fails again. */
  tooLarge: string[];
}

/** A first delivery to record: its outcome, and the record's TTL (the item lives as long as the record). */
export interface FirstDeliveryItem {
  id: string;
  delivery: FirstDelivery;
  /** Epoch seconds; the record's `expiresAt`. */
  expiresAt: number;
  /** What the message was accepted as (its queue body): lets the status listener hear of the `sent`. */
  origin?: RecordOrigin;
}

/** The events a client is shown (the record itself holds at most about 45: lib/model `changes`). */
const MAX_EVENTS = 50;

/**
 * Stored attribute names that differ from the record's fields. Records live for the retention period and a version
 * rolled back to reads what a newer one wrote, so these stay as older versions have them.
 */
const ATTR = {
  /** `true` while the message is in doubt (`inDoubt`); sticky. */
  inDoubt: 'mayHaveReachedWecom',
  /** `inDoubt.since`. Records from before it was kept carry the flag alone. */
  inDoubtSince: 'mayHaveReachedAt',
  /** `false` while the record holds a proof that an attempt missed WeCom (`missed`). */
  missed: 'lastAttemptReachedWecom',
  /** `missed.receive`. */
  missedReceive: 'notReachedAtReceive',
} as const;

/**
 * Attributes of a record item that only the list indexes read (lib/resources `TABLE.listIndex`,
 * `TABLE.recipientIndex`): their keys, and the summary fields a record holds only inside `request`. Written once, at
 * acceptance; never part of the record read back.
 */
export const INDEX_ATTR = {
  listKey: TABLE.listIndex.partitionKey,
  listSort: TABLE.listIndex.sortKey,
  toKey: TABLE.recipientIndex.partitionKey,
  /** `request.msgtype`, top level: an index copies top-level attributes only. */
  msgtype: 'msgtype',
  /** lib/model `recipientsPreview` of `request.recipients`. */
  to: 'to',
} as const;

/**
 * The list index attributes of a record (keys.ts: the message list). A robot's messages are listed under the
 * robot's channel key and name no recipients: they go to the robot's group.
 */
function indexAttributes(record: MessageRecord): Record<string, unknown> {
  const channel = channelKey(channelOf(record));
  const recipients = record.request.robot === undefined ? record.request.recipients : undefined;
  const first = recipients?.touser[0];
  return {
    [INDEX_ATTR.listKey]: listPartition(channel),
    [INDEX_ATTR.listSort]: listSortKey(record.createdAt, record.id),
    ...(first !== undefined ? { [INDEX_ATTR.toKey]: recipientPartition(channel, foldUserId(first)) } : {}),
    [INDEX_ATTR.msgtype]: record.request.msgtype,
    ...(recipients ? { [INDEX_ATTR.to]: recipientsPreview(recipients) } : {}),
  };
}

/**
 * The recipient entries of a record: one per listed user after the first (whom the record's own `toKey` indexes),
 * with what the `byRecipient` index copies. Userids are case-folded: WeCom's are case-insensitive, and validation
 * keeps one spelling per member, so each entry's key is unique.
 */
function recipientEntries(record: MessageRecord): Record<string, unknown>[] {
  if (record.request.robot !== undefined) return [];
  const channel = channelKey(channelOf(record));
  return record.request.recipients.touser.slice(1).map((user) => {
    const folded = foldUserId(user);
    return {
      ...keys.recipient(record.id, folded),
      [INDEX_ATTR.toKey]: recipientPartition(channel, folded),
      [INDEX_ATTR.listSort]: listSortKey(record.createdAt, record.id),
      id: record.id,
      [INDEX_ATTR.msgtype]: record.request.msgtype,
      expiresAt: record.expiresAt,
    };
  });
}

/** The item a record is stored as: its keys, its fields, the markers under their stored names ({@link ATTR}). */
function toItem(record: MessageRecord): Record<string, unknown> {
  const { inDoubt, missed, ...rest } = record;
  return {
    ...keys.message(record.id),
    ...rest,
    ...(inDoubt ? { [ATTR.inDoubt]: true, [ATTR.inDoubtSince]: inDoubt.since } : {}),
    ...(missed ? { [ATTR.missed]: false, [ATTR.missedReceive]: missed.receive } : {}),
    ...indexAttributes(record),
  };
}

/** The record an item holds: {@link toItem} undone. */
function fromItem(item: Record<string, unknown>): MessageRecord {
  const {
    pk: _pk,
    sk: _sk,
    [ATTR.inDoubt]: inDoubt,
    [ATTR.inDoubtSince]: since,
    [ATTR.missed]: missed,
    [ATTR.missedReceive]: receive,
    [INDEX_ATTR.listKey]: _listKey,
    [INDEX_ATTR.listSort]: _listSort,
    [INDEX_ATTR.toKey]: _toKey,
    [INDEX_ATTR.msgtype]: _msgtype,
    [INDEX_ATTR.to]: _to,
    ...rest
  } = item;
  const record = rest as unknown as MessageRecord;
  // A flag without its time: in doubt since acceptance, the earliest an attempt can have started.
  if (inDoubt === true) record.inDoubt = { since: typeof since === 'string' ? since : record.createdAt };
  if (missed === false && typeof receive === 'number') record.missed = { receive };
  return record;
}

export class DynamoMessageStore implements MessageStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
    private readonly onStatus?: StatusListener,
  ) {
    this.db = portClient(db);
  }

  async create(record: MessageRecord): Promise<'created' | 'exists'> {
    const entries = recipientEntries(record);
    if (entries.length > 0) {
      // Entries before the record: a record never exists without them, while an entry whose record failed to be
      // written is harmless (the list skips an entry without a record). Plain puts, safe to repeat.
      const unwritten = await this.batchPut(entries.map((item) => ({ id: record.id, item })));
      if (unwritten.length > 0) {
        throw new StoreUnavailableError({ cause: new Error('recipient entries left unprocessed') });
      }
    }
    const written = await conditionalWrite(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: toItem(record),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    return written ? 'created' : 'exists';
  }

  async get(id: string): Promise<MessageRecord | undefined> {
    // One request for the record and its first delivery: they share the partition (keys.ts).
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.message(id).pk },
        ConsistentRead: true,
      }),
    );
    const items = (out.Items ?? []) as Record<string, unknown>[];
    const item = items.find((i) => i.sk === keys.message(id).sk);
    if (!item || isExpired(item as { expiresAt?: number }, this.now())) return undefined;
    const delivery = items.find((i) => i.sk === keys.firstDelivery(id).sk) as
      | (FirstDelivery & { expiresAt?: number })
      | undefined;
    return withFirstDelivery(
      fromItem(item),
      delivery ? { at: delivery.at, receipt: delivery.receipt } : undefined,
    );
  }

  async createBatch(records: MessageRecord[]): Promise<BatchCreateResult> {
    const tooLarge: string[] = [];
    const unwritten = await this.batchPut(
      records.flatMap((r) => [
        { id: r.id, item: toItem(r) },
        ...recipientEntries(r).map((item) => ({ id: r.id, item })),
      ]),
      async (chunk) => {
        // One item over 400 KB makes DynamoDB refuse the whole BatchWriteItem: write the chunk one by one instead.
        const ids = await Promise.all(
          chunk.map((c) =>
            this.db.send(new PutCommand({ TableName: this.tableName, Item: c.item })).then(
              () => undefined,
              (err: unknown) => {
                if (err instanceof StoreRejectedError && err.tooLarge) tooLarge.push(c.id);
                return c.id;
              },
            ),
          ),
        );
        return ids.filter((id): id is string => id !== undefined);
      },
    );
    // A message counts once, whichever of its items (record, entries) were not written.
    return { unwritten: [...new Set(unwritten)], tooLarge };
  }

  async putFirstDeliveries(deliveries: FirstDeliveryItem[]): Promise<string[]> {
    const unwritten = await this.batchPut(
      deliveries.map((d) => ({
        id: d.id,
        item: { ...keys.firstDelivery(d.id), ...d.delivery, expiresAt: d.expiresAt },
      })),
    );
    if (this.onStatus) {
      const missed = new Set(unwritten);
      await Promise.all(
        deliveries
          .filter((d) => d.origin && !missed.has(d.id))
          .map((d) => this.tell(withFirstDelivery(newRecord(d.origin as RecordOrigin), d.delivery), 'send')),
      );
    }
    return unwritten;
  }

  private async tell(record: MessageRecord, transition: TransitionName): Promise<void> {
    await this.onStatus?.(record, transition).catch(() => undefined);
  }

  /**
   * Puts in parallel BatchWriteItem chunks of 25, unprocessed items retried with backoff. Returns the ids not
   * written; a chunk whose request failed counts as not written, and when every chunk failed the error is thrown.
   */
  private async batchPut(
    items: { id: string; item: Record<string, unknown> }[],
    onRejected?: (chunk: { id: string; item: Record<string, unknown> }[]) => Promise<string[]>,
  ): Promise<string[]> {
    const chunks: (typeof items)[] = [];
    for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25));
    const outcomes = await Promise.allSettled(
      chunks.map((chunk) =>
        this.batchPutChunk(chunk).catch((err: unknown) => {
          if (onRejected && err instanceof StoreRejectedError) return onRejected(chunk);
          throw err;
        }),
      ),
    );
    const rejected = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (rejected && outcomes.every((o) => o.status === 'rejected')) throw rejected.reason;
    return outcomes.flatMap((o, i) =>
      o.status === 'fulfilled' ? o.value : (chunks[i] ?? []).map((r) => r.id),
    );
  }

  private async batchPutChunk(chunk: { id: string; item: Record<string, unknown> }[]): Promise<string[]> {
    const idOf = new Map(chunk.map((c) => [`${c.item.pk}|${c.item.sk}`, c.id]));
    let pending = chunk.map((c) => ({ PutRequest: { Item: c.item } }));
    // BatchWriteItem may leave items unprocessed under throttling; retry those a few times with backoff.
    for (let attempt = 0; pending.length > 0 && attempt < 4; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      const out = await this.db.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }));
      pending = (out.UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
    }
    return pending.map((p) => idOf.get(`${p.PutRequest.Item.pk}|${p.PutRequest.Item.sk}`) ?? '');
  }

  async claimCopy(id: string, generation: number, opts: { redelivery?: boolean } = {}): Promise<boolean> {
    // Only while the message may still be sent.
    const pendingValues = Object.fromEntries(PENDING_STATUSES.map((s, i) => [`:pending${i}`, s]));
    const pending = Object.keys(pendingValues);
    const newer = opts.redelivery ? '#claimed <= :g' : '#claimed < :g';
    const written = await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.message(id),
          UpdateExpression: 'SET #claimed = :g',
          ConditionExpression: `attribute_exists(pk) AND #status IN (${pending.join(', ')}) AND (attribute_not_exists(#claimed) OR ${newer})`,
          ExpressionAttributeNames: { '#claimed': 'claimedGeneration', '#status': 'status' },
          ExpressionAttributeValues: { ':g': generation, ...pendingValues },
        }),
      ),
    );
    return written !== undefined;
  }

  async noteEvent(id: string, event: MessageEvent): Promise<boolean> {
    // No status condition: a first delivery's `sent` lives in an item beside the record (putFirstDeliveries).
    const written = await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.message(id),
          UpdateExpression:
            'SET #events = list_append(if_not_exists(#events, :empty), :event), #updatedAt = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#events': 'events', '#updatedAt': 'updatedAt' },
          ExpressionAttributeValues: { ':event': [event], ':empty': [], ':at': event.at },
        }),
      ),
    );
    return written !== undefined;
  }

  async transition(id: string, c: StatusChange): Promise<boolean> {
    const { update, names, values, fromKeys } = updateFor(c);
    let condition = `attribute_exists(pk) AND #status IN (${fromKeys.join(', ')})`;
    if (c.ifGeneration !== undefined) {
      names['#gen'] = 'generation';
      values[':ifGen'] = c.ifGeneration;
      condition += ' AND #gen = :ifGen';
    }
    if (c.unclaimed) condition += ` AND ${unclaimedCondition(c.unclaimed.freshBefore, names, values)}`;
    const written = await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.message(id),
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          // The listener gets the record as written, in the same request (no read after the write).
          ...(this.onStatus ? { ReturnValues: 'ALL_NEW' as const } : {}),
        }),
      ),
    );
    if (written && this.onStatus && written.Attributes) {
      await this.tell(fromItem(written.Attributes), c.transition);
    }
    return written !== undefined;
  }
}

/**
 * lib/model's `unclaimed` condition (a cancel) in DynamoDB's syntax: no copy holds the claim to send, not in doubt,
 * nothing sent in part, and a generation-0 record not `scheduled` accepted before `freshBefore`. A first delivery
 * lives in an item of its own, out of a condition's reach; one can only come from a copy that sent unclaimed, which
 * recorded it before `freshBefore` (lib/model `FRESH_CANCEL_AFTER_MS`), and the cancel read the record after that.
 */
function unclaimedCondition(
  freshBefore: string,
  names: Record<string, string>,
  values: Record<string, unknown>,
): string {
  Object.assign(names, {
    '#claimed': 'claimedGeneration',
    '#gen': 'generation',
    '#doubt': ATTR.inDoubt,
    '#parts': 'parts',
    '#createdAt': 'createdAt',
  });
  Object.assign(values, { ':zero': 0, ':scheduled': STATUS.scheduled, ':freshBefore': freshBefore });
  return [
    '(attribute_not_exists(#claimed) OR #claimed < #gen)',
    'attribute_not_exists(#doubt)',
    'attribute_not_exists(#parts)',
    '(#gen > :zero OR #status = :scheduled OR #createdAt < :freshBefore)',
  ].join(' AND ');
}

/**
 * The UpdateItem of a status change: what lib/model `applyChange` does in memory, as an update expression. Stored
 * attribute names stay as older records have them ({@link ATTR}).
 */
function updateFor(c: StatusChange) {
  const names: Record<string, string> = { '#status': 'status', '#updatedAt': 'updatedAt' };
  const values: Record<string, unknown> = { ':to': c.to, ':at': c.at };
  const sets = ['#status = :to', '#updatedAt = :at'];
  const removes: string[] = [];
  const adds: string[] = [];
  const fromKeys = c.from.map((s, i) => {
    values[`:from${i}`] = s;
    return `:from${i}`;
  });
  if (c.eventMode === 'count') {
    names['#lastEvent'] = 'lastEvent';
    names['#omitted'] = 'eventsOmitted';
    values[':event'] = c.event;
    values[':one'] = 1;
    sets.push('#lastEvent = :event');
    adds.push('#omitted :one');
  } else {
    names['#events'] = 'events';
    values[':event'] = [c.event];
    values[':empty'] = [];
    sets.push('#events = list_append(if_not_exists(#events, :empty), :event)');
  }
  const optional: [keyof StatusChange, string][] = [
    ['wecom', 'wecom'],
    ['error', 'error'],
    ['sentAt', 'sentAt'],
    ['generation', 'generation'],
  ];
  for (const [field, attr] of optional) {
    if (c[field] === undefined) continue;
    names[`#${attr}`] = attr;
    values[`:${attr}`] = c[field];
    sets.push(`#${attr} = :${attr}`);
  }
  if (c.attemptsDelta) {
    names['#attempts'] = 'attempts';
    values[':attempts'] = c.attemptsDelta;
    adds.push('#attempts :attempts');
  }
  if (c.part) {
    names['#parts'] = 'parts';
    values[':part'] = [c.part];
    // Set here too: a counted event (a fan-out deferred past the listed generations) does not set it above.
    values[':empty'] = [];
    sets.push('#parts = list_append(if_not_exists(#parts, :empty), :part)');
  }
  attemptMarkers(c, { names, values, sets, removes });
  const update = [
    `SET ${sets.join(', ')}`,
    adds.length ? `ADD ${adds.join(', ')}` : '',
    removes.length ? `REMOVE ${removes.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { update, names, values, fromKeys };
}

/** The markers of an attempt's outcome at WeCom (in doubt since when, or missed at which receive) and the error to clear. */
function attemptMarkers(
  c: StatusChange,
  {
    names,
    values,
    sets,
    removes,
  }: { names: Record<string, string>; values: Record<string, unknown>; sets: string[]; removes: string[] },
): void {
  if (c.inDoubt) {
    names['#doubt'] = ATTR.inDoubt;
    names['#since'] = ATTR.inDoubtSince;
    values[':doubt'] = true;
    values[':since'] = c.inDoubt.since;
    sets.push(
      '#doubt = :doubt',
      c.replaceInDoubt ? '#since = :since' : '#since = if_not_exists(#since, :since)',
    );
  }
  if (c.clearError) {
    names['#error'] = 'error';
    removes.push('#error');
  }
  if (c.clearInDoubt && !c.inDoubt) {
    names['#doubt'] = ATTR.inDoubt;
    names['#since'] = ATTR.inDoubtSince;
    removes.push('#doubt', '#since');
  }
  if (c.missed !== undefined) {
    names['#missed'] = ATTR.missed;
    names['#receive'] = ATTR.missedReceive;
    if (c.missed === false) removes.push('#missed', '#receive');
    else {
      values[':false'] = false;
      values[':receive'] = c.missed.receive;
      sets.push('#missed = :false', '#receive = :receive');
    }
  }
}

/**
 * The event list a client sees: the newest listed events, with the record's `lastEvent` (the end of a long run of
 * retries or deferrals that were counted, not listed) in its place by time.
 */
export function recentEvents(r: Pick<MessageRecord, 'events' | 'lastEvent'>): MessageEvent[] {
  // By time: a first delivery's `sent` is folded in on read (after any event noted since), and sort is stable.
  const listed = [...(r.events ?? [])].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const last = r.lastEvent;
  if (!last) return listed.slice(-MAX_EVENTS);
  const i = listed.findIndex((e) => e.at > last.at);
  const all = i < 0 ? [...listed, last] : [...listed.slice(0, i), last, ...listed.slice(i)];
  return all.slice(-MAX_EVENTS);
}
