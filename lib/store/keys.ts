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
 * | WeCom event     | CALLBACK#<app>#<event id>                   | CALLBACK |
 * | message's event | MSG#<id>                                    | EVENT#<received at>#<event id> |
 * | webhook attempt | MSG#<id>                                    | HOOK#<at>#<webhook id>#<attempt> |
 * | broadcast reach | DIR#<corpId>#<agentId>#<all|party:id|tag:id> | DIR    |
 * | its refresh lock| DIR#<corpId>#<agentId>#<all|party:id|tag:id> | LOCK   |
 *
 * Every item carries `expiresAt`: messages, their events and attempts from the retention setting, the rest from
 * their own lifetime. An event id is the callback's dedupe key (lib/callback `dedupeKey`: `msg:<MsgId>` or
 * `evt:<hash>`), so the event item is its own claim: a callback WeCom retries finds it. Event items also carry the
 * keys of the `byFeed` index (lib/resources `TABLE.feedIndex`): `EVENTS#<app>#<UTC month received, YYYY-MM>` and
 * `<received at, ISO>#<event id>`, an app's events in order of arrival for `GET /v1/events?since=`; split by month,
 * so a page over the retention period (30 days by default) is one or two Queries. A message's events and
 * attempts share its partition: one Query each lists them, newest first. Template-card records are also in the
 * `byTask` index (lib/resources `TABLE.taskIndex`) under `taskKey`.
 */
export const ATTR = {
  pk: 'pk',
  sk: 'sk',
  expiresAt: 'expiresAt',
} as const;

export const keys = {
  message: (id: string) => ({ pk: `MSG#${id}`, sk: 'MSG' }),
  /** The outcome of a message's first delivery, beside its record (read together: one Query on pk). */
  firstDelivery: (id: string) => ({ pk: `MSG#${id}`, sk: 'SENT' }),
  idempotency: (apiKey: string, keyHash: string) => ({ pk: `IDEM#${apiKey}#${keyHash}`, sk: 'IDEM' }),
  token: (corpId: string, agentId: number) => ({ pk: `TOKEN#${corpId}#${agentId}`, sk: 'TOKEN' }),
  tokenLock: (corpId: string, agentId: number) => ({ pk: `TOKEN#${corpId}#${agentId}`, sk: 'LOCK' }),
  /** `name`: `app`, `broadcast` or `member#<userid>`; the counters inside are laid out by quota-store.ts. */
  quota: (app: string, name: string) => ({ pk: `QUOTA#${app}#${name}`, sk: 'Q' }),
  pause: (app: string) => ({ pk: `PAUSE#${app}`, sk: 'PAUSE' }),
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
} as const;

/** The feed index partition of an app's events received in one UTC month (`YYYY-MM`). */
export const feedPartition = (app: string, month: string): string => `EVENTS#${app}#${month}`;
/** Sort-key prefixes of the items that share a message's partition with its record (sk `MSG`). */
export const MESSAGE_EVENT_PREFIX = 'EVENT#';
export const WEBHOOK_ATTEMPT_PREFIX = 'HOOK#';

/** DynamoDB TTL deletes late (typically within days), so every read treats an expired item as absent. */
export const isExpired = (item: { expiresAt?: number } | undefined, nowMs: number): boolean =>
  item?.expiresAt !== undefined && item.expiresAt * 1000 <= nowMs;

export const epochSeconds = (ms: number): number => Math.floor(ms / 1000);
