import { BatchWriteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  type MessageEvent,
  type MessageRecord,
  PENDING_STATUSES,
  type StatusChange,
} from '#lib/model/index.js';
import { conditionalWrite, type DocClient, portClient } from './client.js';
import { isExpired, keys } from './keys.js';

/** Port: where message records live. */
export interface MessageStore {
  /** Writes a new record; `exists` when a record with its id is stored already (then nothing is written). */
  create(record: MessageRecord): Promise<'created' | 'exists'>;
  /**
   * Creates new records (fresh ids) in one BatchWriteItem per 25 — a batch POST's records in 4 requests instead
   * of 100. Unconditional: BatchWriteItem has no conditions, and a new ULID cannot collide with a stored one.
   * Returns ids that were not written (the caller fails them; it never enqueues a message without its record).
   */
  createBatch(records: MessageRecord[]): Promise<string[]>;
  /** Strongly consistent: a redelivery must see a `sent` written a moment ago. */
  get(id: string): Promise<MessageRecord | undefined>;
  /**
   * Writes records that move to `sent` on their first delivery in one BatchWriteItem per 25. The records are
   * exactly what ingest wrote plus the outcome, so a full put needs no read. Returns ids that were not written.
   */
  putSentBatch(records: MessageRecord[]): Promise<string[]>;
  /**
   * A named status change (lib/model `changes`), applied as `applyChange` does in memory; false when the record is
   * missing or its status is not in the change's `from`.
   */
  transition(id: string, change: StatusChange): Promise<boolean>;
  /**
   * A deferred copy (generation ≥ 1) claims the right to send, once: SQS may hold two copies of one deferral
   * (an SDK retry of a SendMessage that had succeeded). True for exactly one of them.
   */
  claimCopy(id: string, generation: number): Promise<boolean>;
}

/** Keeps the stored event list bounded (DynamoDB items max 400 KB). */
const MAX_EVENTS = 50;

const stripKeys = (item: Record<string, unknown>): MessageRecord => {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest as unknown as MessageRecord;
};

export class DynamoMessageStore implements MessageStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.db = portClient(db);
  }

  async create(record: MessageRecord): Promise<'created' | 'exists'> {
    const written = await conditionalWrite(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...keys.message(record.id), ...record },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    return written ? 'created' : 'exists';
  }

  async get(id: string): Promise<MessageRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.message(id), ConsistentRead: true }),
    );
    if (!out.Item || isExpired(out.Item as { expiresAt?: number }, this.now())) return undefined;
    return stripKeys(out.Item);
  }

  createBatch(records: MessageRecord[]): Promise<string[]> {
    return this.batchPut(records);
  }

  putSentBatch(records: MessageRecord[]): Promise<string[]> {
    return this.batchPut(records);
  }

  /**
   * Full puts in parallel BatchWriteItem chunks of 25, unprocessed items retried with backoff. Returns the ids not
   * written; a chunk whose request failed counts as not written, and when every chunk failed the error is thrown.
   */
  private async batchPut(records: MessageRecord[]): Promise<string[]> {
    const chunks: MessageRecord[][] = [];
    for (let i = 0; i < records.length; i += 25) chunks.push(records.slice(i, i + 25));
    const outcomes = await Promise.allSettled(chunks.map((chunk) => this.batchPutChunk(chunk)));
    const rejected = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (rejected && outcomes.every((o) => o.status === 'rejected')) throw rejected.reason;
    return outcomes.flatMap((o, i) =>
      o.status === 'fulfilled' ? o.value : (chunks[i] ?? []).map((r) => r.id),
    );
  }

  private async batchPutChunk(chunk: MessageRecord[]): Promise<string[]> {
    let pending = chunk.map((r) => ({ PutRequest: { Item: { ...keys.message(r.id), ...r } } }));
    // BatchWriteItem may leave items unprocessed under throttling; retry those a few times with backoff.
    for (let attempt = 0; pending.length > 0 && attempt < 4; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      const out = await this.db.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }));
      pending = (out.UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
    }
    return pending.map((p) => String((p.PutRequest.Item as { id: string }).id));
  }

  async claimCopy(id: string, generation: number): Promise<boolean> {
    // Only while the message may still be sent.
    const pendingValues = Object.fromEntries(PENDING_STATUSES.map((s, i) => [`:pending${i}`, s]));
    const pending = Object.keys(pendingValues);
    const written = await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.message(id),
          UpdateExpression: 'SET #claimed = :g',
          ConditionExpression: `attribute_exists(pk) AND #status IN (${pending.join(', ')}) AND (attribute_not_exists(#claimed) OR #claimed < :g)`,
          ExpressionAttributeNames: { '#claimed': 'claimedGeneration', '#status': 'status' },
          ExpressionAttributeValues: { ':g': generation, ...pendingValues },
        }),
      ),
    );
    return written !== undefined;
  }

  async transition(id: string, c: StatusChange): Promise<boolean> {
    const { update, names, values, fromKeys } = updateFor(c);
    const written = await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.message(id),
          UpdateExpression: update,
          ConditionExpression: `attribute_exists(pk) AND #status IN (${fromKeys.join(', ')})`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      ),
    );
    return written !== undefined;
  }
}

/**
 * The UpdateItem of a status change: what lib/model `applyChange` does in memory, as an update expression. Stored
 * attribute names stay as older records have them (`lastAttemptReachedWecom`, `notReachedAtReceive`).
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
  names['#events'] = 'events';
  values[':event'] = [c.event];
  values[':empty'] = [];
  sets.push('#events = list_append(if_not_exists(#events, :empty), :event)');
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
  if (c.mayHaveReachedWecom) {
    names['#mhr'] = 'mayHaveReachedWecom';
    values[':mhr'] = true;
    sets.push('#mhr = :mhr');
  }
  if (c.missedWecomAtReceive !== undefined) {
    names['#lr'] = 'lastAttemptReachedWecom';
    names['#nra'] = 'notReachedAtReceive';
    if (c.missedWecomAtReceive === false) removes.push('#lr', '#nra');
    else {
      values[':false'] = false;
      values[':nra'] = c.missedWecomAtReceive;
      sets.push('#lr = :false', '#nra = :nra');
    }
  }
  const update = [
    `SET ${sets.join(', ')}`,
    adds.length ? `ADD ${adds.join(', ')}` : '',
    removes.length ? `REMOVE ${removes.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { update, names, values, fromKeys };
}

/** Trims the event list a client sees; the store appends, this keeps the newest. */
export const recentEvents = (events: MessageEvent[] | undefined): MessageEvent[] =>
  (events ?? []).slice(-MAX_EVENTS);
