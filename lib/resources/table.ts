/** Single DynamoDB table. Key design: see `lib/store/keys.ts`. */
export const TABLE = {
  /** Physical name used by the local stack; CDK lets CloudFormation name it. */
  localName: 'wecom-gateway',
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds. DynamoDB TTL deletes lazily (up to days late), so reads must also treat expired items as absent. */
  ttlAttribute: 'expiresAt',
  /**
   * Sparse global secondary index over template-card records (only they carry `taskKey` = `<app>#<task_id>`), keys
   * only: a card callback's TaskId finds its message with one Query. Eventually consistent, which is plenty — a
   * card is clicked by a person, long after it was sent.
   */
  taskIndex: { name: 'byTask', partitionKey: 'taskKey', sortKey: 'createdAt', projection: 'keys' },
  /**
   * Sparse global secondary index over received WeCom events (only their items carry `feedKey` =
   * `EVENTS#<app>#<month>` and `feedSort` = `<received at>#<event id>`), all attributes: an app's events in the
   * order they arrived, for `GET /v1/events`. The event item itself is the callback's dedupe claim, so storing a
   * callback is one conditional write; the index orders it at no extra request.
   */
  feedIndex: { name: 'byFeed', partitionKey: 'feedKey', sortKey: 'feedSort', projection: 'all' },
} as const;

/** The table's global secondary indexes. */
export const TABLE_INDEXES = [TABLE.taskIndex, TABLE.feedIndex] as const;
export type IndexName = (typeof TABLE_INDEXES)[number]['name'];
