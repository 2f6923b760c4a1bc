import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { StoredToken, TokenStore } from '#lib/wecom/index.js';
import { conditionalWrite, type DocClient, portClient } from './client.js';
import { epochSeconds, isExpired, keys } from './keys.js';

export class DynamoTokenStore implements TokenStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.db = portClient(db);
  }

  async get(corpId: string, agentId: number): Promise<StoredToken | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.token(corpId, agentId), ConsistentRead: true }),
    );
    const item = out.Item as (StoredToken & { expiresAt?: number }) | undefined;
    if (!item || isExpired(item, this.now()) || item.expiresAtMs <= this.now()) return undefined;
    return {
      token: item.token,
      expiresAtMs: item.expiresAtMs,
      ...(item.refreshAtMs !== undefined ? { refreshAtMs: item.refreshAtMs } : {}),
    };
  }

  async put(corpId: string, agentId: number, t: StoredToken): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keys.token(corpId, agentId), ...t, expiresAt: epochSeconds(t.expiresAtMs) + 60 },
      }),
    );
  }

  async invalidate(corpId: string, agentId: number, token: string): Promise<void> {
    // A newer token (another holder refreshed meanwhile) stays.
    await conditionalWrite(
      this.db.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: keys.token(corpId, agentId),
          ConditionExpression: '#token = :token',
          ExpressionAttributeNames: { '#token': 'token' },
          ExpressionAttributeValues: { ':token': token },
        }),
      ),
    );
  }

  async acquireLock(corpId: string, agentId: number, owner: string, leaseMs: number): Promise<boolean> {
    const now = this.now();
    const written = await conditionalWrite(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keys.tokenLock(corpId, agentId),
            owner,
            leaseUntil: now + leaseMs,
            expiresAt: epochSeconds(now + leaseMs) + 60,
          },
          ConditionExpression: 'attribute_not_exists(pk) OR leaseUntil < :now',
          ExpressionAttributeValues: { ':now': now },
        }),
      ),
    );
    return written !== undefined;
  }

  async releaseLock(corpId: string, agentId: number, owner: string): Promise<void> {
    // Another holder's lock (ours ran out) stays.
    await conditionalWrite(
      this.db.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: keys.tokenLock(corpId, agentId),
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':owner': owner },
        }),
      ),
    );
  }
}
