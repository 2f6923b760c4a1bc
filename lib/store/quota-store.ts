import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalWrite, type DocClient, portClient } from './client.js';
import { epochSeconds, isExpired, keys } from './keys.js';

export type MemberVerdict = 'ok' | 'minute' | 'hour';

/** Port: atomic, conditional quota counters. */
export interface QuotaStore {
  /** Adds `amount` to the counter if the result stays ≤ `limit`. */
  reserve(
    app: string,
    scope: string,
    window: number,
    amount: number,
    limit: number,
    expiresAtMs: number,
  ): Promise<boolean>;
  /** Gives back an unused reservation (no condition: a counter may not go below what was really used). */
  release(app: string, scope: string, window: number, amount: number): Promise<void>;
  /**
   * One request for both per-member windows: the hour item holds the hour total and one attribute per minute,
   * so a message to one member costs one conditional update, not two.
   */
  reserveMember(
    app: string,
    userId: string,
    hour: number,
    minuteOfHour: number,
    limits: { perMinute: number; perHour: number },
    expiresAtMs: number,
  ): Promise<MemberVerdict>;
  releaseMember(app: string, userId: string, hour: number, minuteOfHour: number): Promise<void>;
  /** The counter's value (0 when absent): what `GET /v1/apps/{app}` shows. */
  counter(app: string, scope: string, window: number): Promise<number>;
}

/** Told the counter's value after each successful reservation (for the utilisation metric). */
export type QuotaUsageListener = (app: string, scope: string, used: number, limit: number) => void;

export class DynamoQuotaStore implements QuotaStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
    private readonly onUsage?: QuotaUsageListener,
  ) {
    this.db = portClient(db);
  }

  async reserve(
    app: string,
    scope: string,
    window: number,
    amount: number,
    limit: number,
    expiresAtMs: number,
  ) {
    if (amount > limit) return false;
    const out = await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.quota(app, scope, window),
          UpdateExpression: 'ADD #c :n SET expiresAt = if_not_exists(expiresAt, :exp)',
          ConditionExpression: 'attribute_not_exists(#c) OR #c <= :max',
          ExpressionAttributeNames: { '#c': 'used' },
          ExpressionAttributeValues: {
            ':n': amount,
            ':max': limit - amount,
            ':exp': epochSeconds(expiresAtMs),
          },
          // The new count comes back with the write at no extra cost: it feeds the utilisation metric.
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    if (!out) return false;
    const used = Number(out.Attributes?.used);
    if (this.onUsage && Number.isFinite(used)) this.onUsage(app, scope, used, limit);
    return true;
  }

  async release(app: string, scope: string, window: number, amount: number): Promise<void> {
    if (amount <= 0) return;
    await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.quota(app, scope, window),
          UpdateExpression: 'ADD #c :n',
          ConditionExpression: 'attribute_exists(#c)',
          ExpressionAttributeNames: { '#c': 'used' },
          ExpressionAttributeValues: { ':n': -amount },
        }),
      ),
    );
  }

  async reserveMember(
    app: string,
    userId: string,
    hour: number,
    minuteOfHour: number,
    limits: { perMinute: number; perHour: number },
    expiresAtMs: number,
  ): Promise<MemberVerdict> {
    const key = keys.memberQuota(app, userId, hour);
    const written = await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: 'ADD #h :one, #m :one SET expiresAt = if_not_exists(expiresAt, :exp)',
          ConditionExpression:
            '(attribute_not_exists(#h) OR #h < :hl) AND (attribute_not_exists(#m) OR #m < :ml)',
          ExpressionAttributeNames: { '#h': 'hour', '#m': `m${minuteOfHour}` },
          ExpressionAttributeValues: {
            ':one': 1,
            ':hl': limits.perHour,
            ':ml': limits.perMinute,
            ':exp': epochSeconds(expiresAtMs),
          },
        }),
      ),
    );
    if (written) return 'ok';
    // Rare path (over quota): one read tells which window is full, so the deferral waits just long enough.
    const out = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
    );
    const item = out.Item as Record<string, number> | undefined;
    if (!item || isExpired(item, this.now())) return 'minute';
    return (item.hour ?? 0) >= limits.perHour ? 'hour' : 'minute';
  }

  async counter(app: string, scope: string, window: number): Promise<number> {
    const out = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keys.quota(app, scope, window),
        ConsistentRead: true,
      }),
    );
    const item = out.Item as { used?: number; expiresAt?: number } | undefined;
    return item && !isExpired(item, this.now()) ? Number(item.used ?? 0) : 0;
  }

  async releaseMember(app: string, userId: string, hour: number, minuteOfHour: number): Promise<void> {
    await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.memberQuota(app, userId, hour),
          UpdateExpression: 'ADD #h :minus, #m :minus',
          ConditionExpression: 'attribute_exists(#h)',
          ExpressionAttributeNames: { '#h': 'hour', '#m': `m${minuteOfHour}` },
          ExpressionAttributeValues: { ':minus': -1 },
        }),
      ),
    );
  }
}
