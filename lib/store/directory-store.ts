import { gunzipSync, gzipSync } from 'node:zlib';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DirectoryStore, StoredReach } from '#lib/wecom/index.js';
import { conditionalWrite, type DocClient, portClient } from './client.js';
import { epochSeconds, isExpired, keys } from './keys.js';

/**
 * The broadcast directory (lib/wecom/directory.ts) in DynamoDB: one item per app and target. Member lists are
 * stored gzipped (userids compress well), so a party of tens of thousands fits in DynamoDB's 400 KB item.
 */
export class DynamoDirectoryStore implements DirectoryStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.db = portClient(db);
  }

  async get(corpId: string, agentId: number, target: string): Promise<StoredReach | undefined> {
    const out = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keys.directory(corpId, agentId, target),
        ConsistentRead: true,
      }),
    );
    const item = out.Item as
      | { fetchedAtMs: number; members?: Uint8Array; forbidden?: number; expiresAt?: number }
      | undefined;
    if (!item || isExpired(item, this.now())) return undefined;
    if (item.forbidden !== undefined)
      return { reach: { status: 'forbidden', errcode: item.forbidden }, fetchedAtMs: item.fetchedAtMs };
    const members = item.members ? (JSON.parse(gunzipSync(item.members).toString('utf8')) as string[]) : [];
    return { reach: { status: 'members', members }, fetchedAtMs: item.fetchedAtMs };
  }

  async put(corpId: string, agentId: number, target: string, e: StoredReach, expiresAtMs: number) {
    const body =
      e.reach.status === 'forbidden'
        ? { forbidden: e.reach.errcode }
        : { members: gzipSync(JSON.stringify(e.reach.members)), count: e.reach.members.length };
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keys.directory(corpId, agentId, target),
          ...body,
          fetchedAtMs: e.fetchedAtMs,
          expiresAt: epochSeconds(expiresAtMs),
        },
      }),
    );
  }

  async acquireLock(corpId: string, agentId: number, target: string, owner: string, leaseMs: number) {
    const now = this.now();
    const written = await conditionalWrite(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keys.directoryLock(corpId, agentId, target),
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

  async releaseLock(corpId: string, agentId: number, target: string, owner: string): Promise<void> {
    await conditionalWrite(
      this.db.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: keys.directoryLock(corpId, agentId, target),
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':owner': owner },
        }),
      ),
    );
  }
}
