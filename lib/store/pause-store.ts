import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalWrite, type DocClient, portClient } from './client.js';
import { epochSeconds, isExpired, keys } from './keys.js';

/**
 * An app the gateway pauses, shared by all sender containers: WeCom answered 45009 (`rate_limited`), or an
 * errcode the operator must fix (`config_error`: a wrong secret, an IP not in the trusted list…). Nothing is sent
 * for the app before `untilMs`; after it, one probe at a time tests whether the cause is gone. A probe that
 * succeeds deletes the item; one that fails the same way puts a longer pause (`level` + 1).
 */
export interface AppPause {
  kind: 'rate_limited' | 'config_error';
  /** Epoch ms: nothing is sent before this. */
  untilMs: number;
  /** Epoch ms when this run of pauses began (its first error); it ends when a probe succeeds. */
  sinceMs: number;
  /** How many times the pause was lengthened since `sinceMs` (0: the first pause of the run). */
  level: number;
  errcode?: number;
  /** Short cause, for logs and `GET /v1/apps/{app}`. */
  reason: string;
  /**
   * A fingerprint of the app's configuration (corpId, agentId, secret) when the error came: a container whose
   * configuration differs (the operator fixed it) probes at once instead of waiting for `untilMs`.
   */
  configHash?: string;
  /** Epoch ms: a probe (another container's, perhaps) holds the app until then. */
  probeUntilMs?: number;
}

/** Port: the app pauses, one item per app. */
export interface PauseStore {
  get(app: string): Promise<AppPause | undefined>;
  /** Writes the pause (a later pause of the same run replaces the earlier one). */
  put(app: string, pause: AppPause): Promise<void>;
  /**
   * Takes the probe of the run that began at `sinceMs`, after its pause ended: true for exactly one caller while
   * no other probe holds it. Conditional, so containers racing at the pause's end send one message, not a batch each.
   */
  claimProbe(app: string, sinceMs: number, leaseUntilMs: number, now: number): Promise<boolean>;
  /** Lets the next caller probe (this probe ended without telling whether the cause is gone). */
  releaseProbe(app: string, sinceMs: number): Promise<void>;
  /** Ends the run that began at `sinceMs` (a probe succeeded); a newer run is kept. */
  clear(app: string, sinceMs: number): Promise<void>;
}

/** The item outlives its pause so that the next error of the run lengthens it; a day after, it is forgotten. */
const MEMORY_SECONDS = 86_400;

type StoredPause = Partial<AppPause> & { untilMs: number; expiresAt?: number };

export class DynamoPauseStore implements PauseStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.db = portClient(db);
  }

  async get(app: string): Promise<AppPause | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.pause(app), ConsistentRead: true }),
    );
    const item = out.Item as StoredPause | undefined;
    if (!item || isExpired(item, this.now())) return undefined;
    // Items written before runs existed hold only untilMs and reason (a 60 s pause after 45009).
    return {
      kind: item.kind ?? 'rate_limited',
      untilMs: item.untilMs,
      sinceMs: item.sinceMs ?? item.untilMs - 60_000,
      level: item.level ?? 0,
      reason: item.reason ?? 'WeCom 45009',
      ...(item.errcode !== undefined ? { errcode: item.errcode } : {}),
      ...(item.configHash !== undefined ? { configHash: item.configHash } : {}),
      ...(item.probeUntilMs !== undefined ? { probeUntilMs: item.probeUntilMs } : {}),
    };
  }

  async put(app: string, pause: AppPause): Promise<void> {
    const { probeUntilMs: _probe, ...item } = pause;
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keys.pause(app), ...item, expiresAt: epochSeconds(pause.untilMs) + MEMORY_SECONDS },
      }),
    );
  }

  async claimProbe(app: string, sinceMs: number, leaseUntilMs: number, now: number): Promise<boolean> {
    const written = await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.pause(app),
          UpdateExpression: 'SET probeUntilMs = :lease',
          ConditionExpression:
            'attribute_exists(pk) AND sinceMs = :since AND untilMs <= :now AND (attribute_not_exists(probeUntilMs) OR probeUntilMs <= :now)',
          ExpressionAttributeValues: { ':lease': leaseUntilMs, ':since': sinceMs, ':now': now },
        }),
      ),
    );
    return written !== undefined;
  }

  async releaseProbe(app: string, sinceMs: number): Promise<void> {
    await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.pause(app),
          UpdateExpression: 'REMOVE probeUntilMs',
          ConditionExpression: 'sinceMs = :since',
          ExpressionAttributeValues: { ':since': sinceMs },
        }),
      ),
    );
  }

  async clear(app: string, sinceMs: number): Promise<void> {
    await conditionalWrite(
      this.db.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: keys.pause(app),
          ConditionExpression: 'sinceMs = :since',
          ExpressionAttributeValues: { ':since': sinceMs },
        }),
      ),
    );
  }
}
