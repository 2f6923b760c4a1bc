import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailed } from '#lib/aws/index.js';
import type { StoredToken, TokenFailure, TokenItem, TokenStore } from '#lib/wecom/index.js';
import { conditionalWrite, type DocClient, portClient } from './client.js';
import { epochSeconds, isExpired, keys } from './keys.js';

/** A remembered gettoken failure outlives any token (2 h) so its count keeps growing across a long outage. */
const FAILURE_MEMORY_SECONDS = 86_400;

export class DynamoTokenStore implements TokenStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.db = portClient(db);
  }

  async get(corpId: string, agentId: number): Promise<TokenItem> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.token(corpId, agentId), ConsistentRead: true }),
    );
    const item = out.Item as
      | (Partial<StoredToken> & { expiresAt?: number; failure?: TokenFailure })
      | undefined;
    if (!item || isExpired(item, this.now())) return {};
    const valid = typeof item.token === 'string' && (item.expiresAtMs ?? 0) > this.now();
    return {
      ...(valid
        ? {
            token: {
              token: item.token as string,
              expiresAtMs: item.expiresAtMs as number,
              ...(item.refreshAtMs !== undefined ? { refreshAtMs: item.refreshAtMs } : {}),
              ...(item.fetchedAtMs !== undefined ? { fetchedAtMs: item.fetchedAtMs } : {}),
            },
          }
        : {}),
      ...(item.failure ? { failure: item.failure } : {}),
    };
  }

  async recordFailure(corpId: string, agentId: number, failure: TokenFailure): Promise<void> {
    // An update, not a put: a token that is still valid stays usable next to the failure.
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keys.token(corpId, agentId),
        UpdateExpression: 'SET failure = :f, expiresAt = :exp',
        ExpressionAttributeValues: {
          ':f': failure,
          ':exp': epochSeconds(failure.retryAtMs) + FAILURE_MEMORY_SECONDS,
        },
      }),
    );
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
    // A newer token (another holder refreshed meanwhile) stays; so does a remembered gettoken failure.
    await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.token(corpId, agentId),
          UpdateExpression: 'REMOVE #token, expiresAtMs, refreshAtMs, fetchedAtMs',
          ConditionExpression: '#token = :token',
          ExpressionAttributeNames: { '#token': 'token' },
          ExpressionAttributeValues: { ':token': token },
        }),
      ),
    );
  }

  async acquireLock(corpId: string, agentId: number, owner: string, leaseMs: number): Promise<boolean> {
    const now = this.now();
    try {
      await this.db.send(
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
      );
      return true;
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
      // The SDK retried: the first put may have been applied and its answer lost, so the lock may be our own
      // (review L1). Only then is it worth a read. dynalite has no ReturnValuesOnConditionCheckFailure.
      if (((err as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1) <= 1) return false;
      const out = await this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: keys.tokenLock(corpId, agentId),
          ConsistentRead: true,
        }),
      );
      return (out.Item as { owner?: string } | undefined)?.owner === owner;
    }
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
