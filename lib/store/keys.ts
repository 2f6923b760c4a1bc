import { type Channel, channelOfKey } from '#lib/messages/index.js';

/**
 * Single-table key design (table from lib/resources: pk, sk strings; TTL attribute expiresAt).
 *
 * | item            | pk                                          | sk      |
 * |-----------------|---------------------------------------------|---------|
 * | message record  | MSG#<id>                                    | MSG     |
 * | first delivery  | MSG#<id>                                    | SENT    |
 * | idempotency key | IDEM#<api key name>#<sha256(Idempotency-Key)> | IDEM  |
 * | access token    | TOKEN#<corpId>#<agentId>                    | TOKEN   |
 * | token lock      | TOKEN#<corpId>#<agentId>                    | LOCK    |
 * | app quota       | QUOTA#<app>#app  (calls, person-times)       | Q       |
 * | member quota    | QUOTA#<app>#member#<case-folded userid>     | Q       |
 * | broadcast quota | QUOTA#<app>#broadcast                       | Q       |
 * | app pause       | PAUSE#<app>                                 | PAUSE   |
 * | robot pause     | PAUSE#robot:<robot>                         | PAUSE   |
 * | robot quota     | QUOTA#robot:<robot>#member#robot            | Q       |
 * | robot media id  | MEDIA#<robot key fingerprint>#<upload digest> | MEDIA |
 * | WeCom event     | CALLBACK#<app>#<event id>                   | CALLBACK |
 * | message's event | MSG#<id>                                    | EVENT#<received at>#<event id> |
 * | webhook attempt | MSG#<id>                                    | HOOK#<at>#<webhook id>#<attempt> |
 * | broadcast reach | DIR#<corpId>#<agentId>#<all|party:id|tag:id> | DIR    |
 * | its refresh lock| DIR#<corpId>#<agentId>#<all|party:id|tag:id> | LOCK   |
 * | recipient entry | RCPT#<id>#<case-folded userid>               | RCPT   |
 *
 * Every item carries `expiresAt`: messages, their events and attempts from the retention setting, the rest from
 * their own lifetime. An event id is the callback's dedupe key (lib/callback `dedupeKey`: `msg:<MsgId>` or
 * `evt:<hash>`), so the event item is its own claim: a callback WeCom retries finds it. Event items also carry the
 * keys of the `byFeed` index (lib/resources `TABLE.feedIndex`): `EVENTS#<app>#<UTC month received, YYYY-MM>` and
 * `<received at, ISO>#<event id>`, an app's events in order of arrival for `GET /v1/events?since=`; split by month,
 * so a page over the retention period (30 days by default) is one or two Queries. A message's events and
 * attempts share its partition: one Query each lists them, newest first. Template-card records are also in the
 * `byTask` index (lib/resources `TABLE.taskIndex`) under `taskKey`.
 *
 * A robot's pause, quota counters and message list are kept under its channel key, `robot:<name>` (lib/messages
 * `channelKey`): no app name holds a colon, so they never meet an app's.
 *
 * The message list (`GET /v1/messages`, lib/store `message-list.ts`): a record carries `listKey` = `MSGS#<app>` and
 * `listSort` = `<createdAt>#<id>` (the `byApp` index: an app's messages newest first; the id makes the sort key
 * unique, so paging never skips or repeats a message accepted in the same millisecond), and, when it lists users,
 * `toKey` = `MSGTO#<app>#<first user, case-folded>` (the `byRecipient` index). Every further listed user gets a
 * recipient entry, an item of its own with the same `toKey`/`listSort` pair for that user, written with the record;
 * it lives as long as the record. Entries are keyed by message and user, not in the message's partition, so the
 * reads of that partition (a record with its first delivery) never load up to 999 of them.
 */
export const ATTR = {
  pk: 'pk',
  sk: 'sk',
  expiresAt: 'expiresAt',
} as const;

/** Sort keys of a message record and of its first delivery, beside it in the message's partition. */
export const RECORD_SK = 'MSG';
export const FIRST_DELIVERY_SK = 'SENT';
const MESSAGE_PK_PREFIX = 'MSG#';

export const keys = {
  message: (id: string) => ({ pk: `${MESSAGE_PK_PREFIX}${id}`, sk: RECORD_SK }),
  /** The outcome of a message's first delivery, beside its record (read together: one Query on pk). */
  firstDelivery: (id: string) => ({ pk: `${MESSAGE_PK_PREFIX}${id}`, sk: FIRST_DELIVERY_SK }),
  idempotency: (apiKey: string, keyHash: string) => ({ pk: `IDEM#${apiKey}#${keyHash}`, sk: 'IDEM' }),
  token: (corpId: string, agentId: number) => ({ pk: `TOKEN#${corpId}#${agentId}`, sk: 'TOKEN' }),
  tokenLock: (corpId: string, agentId: number) => ({ pk: `TOKEN#${corpId}#${agentId}`, sk: 'LOCK' }),
  /** `name`: `app`, `broadcast` or `member#<userid>`; the counters inside are laid out by quota-store.ts. */
  quota: (app: string, name: string) => ({ pk: `QUOTA#${app}#${name}`, sk: 'Q' }),
  pause: (app: string) => ({ pk: `PAUSE#${app}`, sk: 'PAUSE' }),
  /** `robot`: a fingerprint of the robot's key (never the key); `upload`: a digest of the upload (lib/wecom). */
  media: (robot: string, upload: string) => ({ pk: `MEDIA#${robot}#${upload}`, sk: 'MEDIA' }),
  event: (app: string, eventId: string) => ({ pk: `CALLBACK#${app}#${eventId}`, sk: 'CALLBACK' }),
  messageEvent: (messageId: string, receivedAt: string, eventId: string) => ({
    pk: `MSG#${messageId}`,
    sk: `${MESSAGE_EVENT_PREFIX}${receivedAt}#${eventId}`,
  }),
  webhookAttempt: (messageId: string, at: string, webhookId: string, attempt: number) => ({
    pk: `MSG#${messageId}`,
    sk: `${WEBHOOK_ATTEMPT_PREFIX}${at}#${webhookId}#${String(attempt).padStart(3, '0')}`,
  }),
  directory: (corpId: string, agentId: number, target: string) => ({
    pk: `DIR#${corpId}#${agentId}#${target}`,
    sk: 'DIR',
  }),
  directoryLock: (corpId: string, agentId: number, target: string) => ({
    pk: `DIR#${corpId}#${agentId}#${target}`,
    sk: 'LOCK',
  }),
  /** A further listed user of a message (the first is indexed on the record itself). `user` is case-folded. */
  recipient: (messageId: string, user: string) => ({ pk: `RCPT#${messageId}#${user}`, sk: RECIPIENT_SK }),
} as const;

/** The sort key of every recipient entry (its partition key alone is unique): tells an entry from a record. */
export const RECIPIENT_SK = 'RCPT';

/** The `byApp` index partition of an app's messages (of a robot's: `channel` is its channel key, `robot:<name>`). */
export const listPartition = (channel: string): string => `${LIST_PARTITION_PREFIX}${channel}`;
const LIST_PARTITION_PREFIX = 'MSGS#';
/** The channel whose messages a `byApp` partition key lists; undefined for a value it did not make. */
export function channelOfPartition(value: unknown): Channel | undefined {
  return typeof value === 'string' && value.startsWith(LIST_PARTITION_PREFIX)
    ? channelOfKey(value.slice(LIST_PARTITION_PREFIX.length))
    : undefined;
}
/** The `byRecipient` index partition of the messages of an app that list one user (case-folded). */
export const recipientPartition = (app: string, user: string): string => `MSGTO#${app}#${user}`;
/**
 * The sort key both list indexes share: acceptance time, then id. ISO 8601 UTC times of `toISOString` sort as
 * strings in time order, and a time bound (`2026-12-01T08:00:00.000Z`) sorts before every key of that millisecond.
 */
export const listSortKey = (createdAt: string, id: string): string => `${createdAt}#${id}`;
/** {@link listSortKey} read back; undefined for a value it did not make. */
export function parseListSortKey(value: unknown): { createdAt: string; id: string } | undefined {
  if (typeof value !== 'string') return undefined;
  const hash = value.indexOf('#');
  if (hash <= 0 || hash === value.length - 1) return undefined;
  return { createdAt: value.slice(0, hash), id: value.slice(hash + 1) };
}

/** The message id of an item in a message's partition (record, first delivery); undefined for any other item. */
export const messageIdOf = (pk: unknown): string | undefined =>
  typeof pk === 'string' && pk.startsWith(MESSAGE_PK_PREFIX) ? pk.slice(MESSAGE_PK_PREFIX.length) : undefined;

/** The feed index partition of an app's events received in one UTC month (`YYYY-MM`). */
export const feedPartition = (app: string, month: string): string => `EVENTS#${app}#${month}`;
/** Sort-key prefixes of the items that share a message's partition with its record (sk `MSG`). */
export const MESSAGE_EVENT_PREFIX = 'EVENT#';
export const WEBHOOK_ATTEMPT_PREFIX = 'HOOK#';

/** DynamoDB TTL deletes late (typically within days), so every read treats an expired item as absent. */
export const isExpired = (item: { expiresAt?: number } | undefined, nowMs: number): boolean =>
  item?.expiresAt !== undefined && item.expiresAt * 1000 <= nowMs;

export const epochSeconds = (ms: number): number => Math.floor(ms / 1000);
