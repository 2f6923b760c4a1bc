import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalWrite, type DocClient, portClient } from './client.js';
import { keys } from './keys.js';

/**
 * Which response_code of a card: `event`, the newest a card callback brought (`cardCode`), or `send`, the one the
 * send answer carried (`wecom.response_code`). WeCom: each is good for one `update_template_card`, for 72 h
 * (path/94945).
 */
export type CardCodeSource = 'event' | 'send';

/** Port: a card's single-use response codes, kept on its message record. */
export interface CardCodeStore {
  /** Keeps a card callback's response_code, unless a newer one is there already (retries arrive out of order). */
  save(messageId: string, code: string, at: string): Promise<void>;
  /**
   * Claims a code for one update before WeCom sees it, so two updates racing never spend the same code: true for
   * exactly one caller, and only while the code is still the record's current one.
   */
  take(messageId: string, source: CardCodeSource, code: string): Promise<boolean>;
  /** Puts back a claimed code WeCom did not spend (its answer proved so), unless a newer one arrived meanwhile. */
  restore(messageId: string, source: CardCodeSource, code: string, at: string): Promise<void>;
}

export class DynamoCardCodeStore implements CardCodeStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
  ) {
    this.db = portClient(db);
  }

  async save(messageId: string, code: string, at: string): Promise<void> {
    await this.update(
      messageId,
      'SET #card = :card',
      'attribute_exists(pk) AND (attribute_not_exists(#card) OR #card.#at <= :at)',
      { '#card': 'cardCode', '#at': 'at' },
      { ':card': { code, at }, ':at': at },
    );
  }

  async take(messageId: string, source: CardCodeSource, code: string): Promise<boolean> {
    if (source === 'event') {
      return this.update(
        messageId,
        'REMOVE #card',
        '#card.#code = :code',
        { '#card': 'cardCode', '#code': 'code' },
        {
          ':code': code,
        },
      );
    }
    // The send's code is not compared here: it may live only in the first delivery's item beside the record
    // (lib/model `withFirstDelivery`), which one UpdateItem cannot check. A message has exactly one send answer,
    // so the code the caller read (consistently) cannot change; the spent mark alone makes it single use.
    return this.update(
      messageId,
      'SET #spent = :yes',
      'attribute_exists(pk) AND attribute_not_exists(#spent)',
      { '#spent': 'sendCodeSpent' },
      { ':yes': true },
    );
  }

  async restore(messageId: string, source: CardCodeSource, code: string, at: string): Promise<void> {
    if (source === 'event') await this.save(messageId, code, at);
    else {
      await this.update(
        messageId,
        'REMOVE #spent',
        'attribute_exists(#spent)',
        { '#spent': 'sendCodeSpent' },
        {},
      );
    }
  }

  private async update(
    messageId: string,
    expression: string,
    condition: string,
    names: Record<string, string>,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    const written = await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.message(messageId),
          UpdateExpression: expression,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          // DynamoDB refuses an empty map here.
          ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
        }),
      ),
    );
    return written !== undefined;
  }
}
