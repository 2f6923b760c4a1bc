import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalWrite, type DocClient, portClient } from './client.js';
import { epochSeconds, isExpired, keys } from './keys.js';

export interface IdempotencyEntry {
  /** SHA-256 of the canonical request body. */
  bodyHash: string;
  /** The message id the first request was answered with. */
  messageId: string;
  /** Set once that message was stored and enqueued, i.e. the first request was (or is being) answered 202. */
  accepted?: boolean;
  /** When the accepted message is due and released, if it was accepted for later: a replay answers without a read. */
  schedule?: AcceptedSchedule;
}

/** What a replay of a message accepted for later answers with (lib/model `Schedule`'s times). */
export interface AcceptedSchedule {
  dueAt: string;
  releaseAt: string;
}

export type ClaimResult = { claimed: true } | { claimed: false; existing: IdempotencyEntry };

/** Port: Idempotency-Key → first answer, per API key. */
export interface IdempotencyStore {
  /** One conditional put: wins when the key is new or its entry expired; otherwise returns the stored entry. */
  claim(apiKey: string, keyHash: string, entry: IdempotencyEntry, ttlMs: number): Promise<ClaimResult>;
  /** Forgets a claim whose request then failed (so a retry with the same key can succeed). */
  release(apiKey: string, keyHash: string, messageId: string): Promise<void>;
  /** Marks the claim of `messageId` accepted: its message is stored and enqueued (with its schedule, if any). */
  markAccepted(
    apiKey: string,
    keyHash: string,
    messageId: string,
    schedule?: AcceptedSchedule,
  ): Promise<void>;
  /** The live entry of a key, if any (strongly consistent). */
  read(apiKey: string, keyHash: string): Promise<IdempotencyEntry | undefined>;
}

export class DynamoIdempotencyStore implements IdempotencyStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.db = portClient(db);
  }

  async claim(
    apiKey: string,
    keyHash: string,
    entry: IdempotencyEntry,
    ttlMs: number,
    retries = 2,
  ): Promise<ClaimResult> {
    const now = this.now();
    const key = keys.idempotency(apiKey, keyHash);
    const written = await conditionalWrite(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...key, ...entry, expiresAt: epochSeconds(now + ttlMs) },
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
          ExpressionAttributeValues: { ':now': epochSeconds(now) },
        }),
      ),
    );
    if (written) return { claimed: true };
    const existing = await this.read(apiKey, keyHash);
    // Deleted or expired between the two calls: claim again, a bounded number of times.
    if (!existing) {
      if (retries > 0) return this.claim(apiKey, keyHash, entry, ttlMs, retries - 1);
      throw new Error('Idempotency-Key entry keeps disappearing between claim and read');
    }
    return { claimed: false, existing };
  }

  async read(apiKey: string, keyHash: string): Promise<IdempotencyEntry | undefined> {
    const out = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keys.idempotency(apiKey, keyHash),
        ConsistentRead: true,
      }),
    );
    const item = out.Item as (IdempotencyEntry & { expiresAt: number }) | undefined;
    if (!item || isExpired(item, this.now())) return undefined;
    return {
      bodyHash: item.bodyHash,
      messageId: item.messageId,
      ...(item.accepted === true ? { accepted: true } : {}),
      ...(item.schedule ? { schedule: item.schedule } : {}),
    };
  }

  async markAccepted(
    apiKey: string,
    keyHash: string,
    messageId: string,
    schedule?: AcceptedSchedule,
  ): Promise<void> {
    // Released or taken over meanwhile: nothing of ours to mark.
    await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.idempotency(apiKey, keyHash),
          UpdateExpression: schedule ? 'SET accepted = :yes, schedule = :schedule' : 'SET accepted = :yes',
          ConditionExpression: 'messageId = :id',
          ExpressionAttributeValues: {
            ':id': messageId,
            ':yes': true,
            ...(schedule ? { ':schedule': schedule } : {}),
          },
        }),
      ),
    );
  }

  async release(apiKey: string, keyHash: string, messageId: string): Promise<void> {
    await conditionalWrite(
      this.db.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: keys.idempotency(apiKey, keyHash),
          ConditionExpression: 'messageId = :id',
          ExpressionAttributeValues: { ':id': messageId },
        }),
      ),
    );
  }
}
