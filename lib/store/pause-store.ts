import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type DocClient, portClient } from './client.js';
import { epochSeconds, isExpired, keys } from './keys.js';

/** Port: "WeCom answered 45009 for this app: send nothing until `untilMs`", shared by all sender containers. */
export interface PauseStore {
  pause(app: string, untilMs: number, reason: string): Promise<void>;
  pausedUntil(app: string): Promise<number | undefined>;
}

export class DynamoPauseStore implements PauseStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.db = portClient(db);
  }

  async pause(app: string, untilMs: number, reason: string): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keys.pause(app), untilMs, reason, expiresAt: epochSeconds(untilMs) + 60 },
      }),
    );
  }

  async pausedUntil(app: string): Promise<number | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keys.pause(app) }));
    const item = out.Item as { untilMs: number; expiresAt?: number } | undefined;
    if (!item || isExpired(item, this.now()) || item.untilMs <= this.now()) return undefined;
    return item.untilMs;
  }
}
