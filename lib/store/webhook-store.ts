import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { WEBHOOK_STATUS, type WebhookStatus } from '#lib/model/index.js';
import { conditionalWrite, type DocClient, portClient } from './client.js';
import { keys, WEBHOOK_ATTEMPT_PREFIX } from './keys.js';

/** One webhook attempt, as `GET /v1/messages/{id}` lists it. */
export interface WebhookAttempt {
  /** When the attempt started (ISO 8601). */
  at: string;
  /** The `webhook-id` header: the same for every attempt of one webhook. */
  webhookId: string;
  /** `message.sent`, `wecom.event`, … */
  type: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** Scheme, host, port and path of the target; the query string (it may hold a token) is left out. */
  target: string;
  /**
   * `delivered` (2xx), `retry` (another attempt follows), `gone` (410: the receiver asked to stop), `refused` (never
   * sent: the SSRF guard or a missing secret), `dead` (failed, and retries ran out).
   */
  outcome: 'delivered' | 'retry' | 'gone' | 'refused' | 'dead';
  /** The receiver's HTTP status; absent when there was no answer. */
  statusCode?: number;
  latencyMs: number;
  /** Why it did not count as delivered (`HTTP 503`, `ECONNREFUSED`, `refused: host … resolves to a private …`). */
  reason?: string;
  /** The start of the receiver's answer (bounded by the webhook client). */
  excerpt?: string;
  /** Seconds until the next attempt, when one follows. */
  retryInSeconds?: number;
}

/** Port: the record of webhook attempts and the webhook status beside a message's status. */
export interface WebhookLog {
  recordAttempt(messageId: string, attempt: WebhookAttempt, expiresAt: number): Promise<void>;
  /** Sets the message's webhook status; `dead` stays once set (a later success must not hide a lost webhook). */
  setStatus(messageId: string, status: WebhookStatus): Promise<void>;
  /** A message's attempts, newest first. */
  listAttempts(messageId: string, limit: number): Promise<WebhookAttempt[]>;
}

export class DynamoWebhookLog implements WebhookLog {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
  ) {
    this.db = portClient(db);
  }

  async recordAttempt(messageId: string, attempt: WebhookAttempt, expiresAt: number): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keys.webhookAttempt(messageId, attempt.at, attempt.webhookId, attempt.attempt),
          ...attempt,
          expiresAt,
        },
      }),
    );
  }

  async setStatus(messageId: string, status: WebhookStatus): Promise<void> {
    const sticky = status === WEBHOOK_STATUS.dead ? '' : ' AND (attribute_not_exists(#ws) OR #ws <> :dead)';
    await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.message(messageId),
          UpdateExpression: 'SET #ws = :status',
          ConditionExpression: `attribute_exists(pk)${sticky}`,
          ExpressionAttributeNames: { '#ws': 'webhookStatus' },
          ExpressionAttributeValues: {
            ':status': status,
            ...(sticky ? { ':dead': WEBHOOK_STATUS.dead } : {}),
          },
        }),
      ),
    );
  }

  async listAttempts(messageId: string, limit: number): Promise<WebhookAttempt[]> {
    const attempts: WebhookAttempt[] = [];
    let start: Record<string, unknown> | undefined;
    // A Query page ends at 1 MB: a long history (with the receivers' excerpts) may take more than one.
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': keys.message(messageId).pk, ':prefix': WEBHOOK_ATTEMPT_PREFIX },
          ScanIndexForward: false,
          Limit: limit - attempts.length,
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of out.Items ?? []) {
        const { pk: _pk, sk: _sk, expiresAt: _e, ...attempt } = item;
        attempts.push(attempt as WebhookAttempt);
      }
      start = out.LastEvaluatedKey;
    } while (start && attempts.length < limit);
    return attempts;
  }
}
