/** Single DynamoDB table. Key design: see `lib/store/keys.ts`. */

/**
 * What an index copies from the items it holds: their keys only, everything, or the keys plus the named top-level
 * attributes (DynamoDB `INCLUDE`). An index write costs write units by the size of what it copies, and a table write
 * that changes none of the copied attributes costs the index nothing.
 */
export type IndexProjection = 'keys' | 'all' | { readonly include: readonly string[] };

/**
 * Top-level attributes of a message record item (lib/store `message-store.ts` `toItem`) that a list entry shows
 * (`GET /v1/messages`): the `byApp` index copies exactly these, so a page is read from the index alone.
 * Only `status`, `attempts`, `updatedAt` and `sentAt` ever change, so a status change costs one index write and a
 * first delivery (stored beside the record, lib/store `putFirstDeliveries`) none.
 */
export const MESSAGE_SUMMARY_ATTRIBUTES = [
  'id',
  'app',
  'status',
  'priority',
  'msgtype',
  /** The first recipients of each kind and how many more there are (lib/model `RecipientsPreview`). */
  'to',
  'attempts',
  'createdAt',
  'updatedAt',
  'sentAt',
  'expiresAt',
] as const;

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
  /**
   * Sparse global secondary index over message records (only they carry `listKey` = `MSGS#<app>` and `listSort` =
   * `<accepted at>#<id>`), with the attributes a list entry shows: an app's messages by acceptance, newest first,
   * for `GET /v1/messages` — one Query per page. The record write at acceptance indexes it at no extra request.
   * One partition per app: it takes an app's sustained acceptance rate up to DynamoDB's per-partition write limit
   * (1,000 items/s), far above what WeCom lets one app deliver (10,000 calls per minute).
   */
  listIndex: {
    name: 'byApp',
    partitionKey: 'listKey',
    sortKey: 'listSort',
    projection: { include: MESSAGE_SUMMARY_ATTRIBUTES },
  },
  /**
   * Sparse global secondary index of who a message was sent to: `toKey` = `MSGTO#<app>#<case-folded userid>`, sorted
   * like `byApp`. The record carries the key of its first listed user; each further user gets a small item of its
   * own (lib/store `keys.recipient`), written with the record. So `GET /v1/messages?touser=` is one Query, and a
   * message to one user (the usual alert) costs no extra item and no extra request.
   */
  recipientIndex: {
    name: 'byRecipient',
    partitionKey: 'toKey',
    sortKey: 'listSort',
    projection: { include: ['id', 'msgtype', 'expiresAt'] },
  },
} as const;

/** The table's global secondary indexes. */
export const TABLE_INDEXES = [
  TABLE.taskIndex,
  TABLE.feedIndex,
  TABLE.listIndex,
  TABLE.recipientIndex,
] as const;
export type IndexName = (typeof TABLE_INDEXES)[number]['name'];

/**
 * An index's projection in DynamoDB's own terms (CreateTable's `Projection`), for CDK and the local stack alike.
 *
 * @example projectionOf(TABLE.listIndex) // { type: 'INCLUDE', nonKeyAttributes: ['id', 'app', …] }
 */
export function projectionOf(index: { readonly projection: IndexProjection }): {
  type: 'KEYS_ONLY' | 'ALL' | 'INCLUDE';
  nonKeyAttributes?: readonly string[];
} {
  const p = index.projection;
  if (p === 'keys') return { type: 'KEYS_ONLY' };
  if (p === 'all') return { type: 'ALL' };
  return { type: 'INCLUDE', nonKeyAttributes: p.include };
}
