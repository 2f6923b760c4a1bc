import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { MediaKey, MediaStore, StoredMedia } from '#lib/wecom/index.js';
import { MEDIA_LIFETIME_MS } from '#lib/wecom/index.js';
import { conditionalWrite, type DocClient, portClient } from './client.js';
import { epochSeconds, isExpired, keys } from './keys.js';

/**
 * The media ids of group robots' uploads, one item per robot and upload (keys.ts), gone with the media id itself:
 * WeCom keeps it 3 days, and so does the item's TTL.
 */
export class DynamoMediaStore implements MediaStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.db = portClient(db);
  }

  async get(key: MediaKey): Promise<StoredMedia | undefined> {
    const out = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keys.media(key.robot, key.upload),
        ConsistentRead: true,
      }),
    );
    const item = out.Item as (Partial<StoredMedia> & { expiresAt?: number }) | undefined;
    if (!item || isExpired(item, this.now())) return undefined;
    if (typeof item.mediaId !== 'string' || typeof item.uploadedAtMs !== 'number') return undefined;
    return { mediaId: item.mediaId, uploadedAtMs: item.uploadedAtMs };
  }

  async put(key: MediaKey, media: StoredMedia): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keys.media(key.robot, key.upload),
          mediaId: media.mediaId,
          uploadedAtMs: media.uploadedAtMs,
          expiresAt: epochSeconds(media.uploadedAtMs + MEDIA_LIFETIME_MS),
        },
      }),
    );
  }

  async forget(key: MediaKey, mediaId: string): Promise<void> {
    // Only the entry that held the refused id: another container may have stored a fresh one meanwhile.
    await conditionalWrite(
      this.db.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: keys.media(key.robot, key.upload),
          ConditionExpression: 'mediaId = :id',
          ExpressionAttributeValues: { ':id': mediaId },
        }),
      ),
    );
  }
}
